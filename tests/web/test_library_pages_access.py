"""The files, search and settings pages of a folder, and the organize settings page: the login
page for anonymous users, 404 for a folder of another user's, the page for its owner; a viewer's
settings page offers no action the API would refuse."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.library.models import Folder, FolderMembership

pytestmark = pytest.mark.django_db

FOLDER_PAGES = ["files", "search", "settings"]


@pytest.fixture
def folder(user) -> Folder:
    return Folder.objects.create(owner=user, source="local", external_id="/srv/owner-secret", name="owner-secret")


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("page", FOLDER_PAGES)
def test_anonymous_users_are_sent_to_log_in(folder, page):
    url = f"/folders/{folder.pk}/{page}"
    response = Client().get(url)
    assert response.status_code == 302
    assert response["Location"] == f"/login/?next={url}"


def test_anonymous_users_are_sent_to_log_in_from_organize_settings():
    response = Client().get("/settings/organize")
    assert response.status_code == 302 and response["Location"] == "/login/?next=/settings/organize"


@pytest.mark.parametrize("page", FOLDER_PAGES)
def test_another_users_folder_is_a_404(folder, other_user, page):
    response = logged_in(other_user).get(f"/folders/{folder.pk}/{page}")
    assert response.status_code == 404
    assert b"owner-secret" not in response.content


@pytest.mark.parametrize("page", FOLDER_PAGES)
def test_a_missing_folder_is_a_404(user, page):
    assert logged_in(user).get(f"/folders/999999/{page}").status_code == 404


@pytest.mark.parametrize("page", FOLDER_PAGES)
def test_the_owner_gets_the_page(folder, user, page):
    response = logged_in(user).get(f"/folders/{folder.pk}/{page}")
    assert response.status_code == 200
    assert f'data-folder-id="{folder.pk}"'.encode() in response.content


def test_the_owner_gets_organize_settings(user):
    response = logged_in(user).get("/settings/organize")
    assert response.status_code == 200 and b'id="organize-form"' in response.content


def test_a_viewers_settings_page_offers_no_change(folder, other_user):
    FolderMembership.objects.create(folder=folder, user=other_user, role="viewer")
    response = logged_in(other_user).get(f"/folders/{folder.pk}/settings")
    assert response.status_code == 200
    body = response.content.decode()
    assert "Only the owner can rename this folder." in body
    assert 'id="remove-open"' not in body
    assert '<button type="button" class="button" id="sync-now" disabled>' in body


def test_the_search_page_offers_the_folders_own_types(folder, user):
    folder.files.create(external_id="a", path="a.pdf", name="a.pdf", mime_type="application/pdf")
    folder.files.create(external_id="b", path="b.xyz", name="b.xyz", mime_type="application/x-xyz")
    body = logged_in(user).get(f"/folders/{folder.pk}/search").content.decode()
    assert '<option value="application/pdf">PDF</option>' in body
    assert '<option value="application/x-xyz">application/x-xyz</option>' in body

"""Every browser page (enumerated from the URL resolver, outside /api/ and /admin/; allauth's
/accounts/ included) by owner, viewer, editor, another user and anonymous: a page of a folder is
404 to anyone without a role on it, and anonymous visitors are sent to log in. A new page without a
row below fails the suite."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from apps.library.members import invitation_create
from apps.library.models import FolderMembership
from tests.hardening.test_access_matrix import ALL_ROUTES

pytestmark = pytest.mark.django_db

PUBLIC, SIGNED_IN, FOLDER_VIEW, AUTHOR = "public", "signed-in", "folder-view", "author"
# The site's staff (and a scraper's METRICS_TOKEN, tests/core/test_metrics.py): anonymous 401, others 403.
STAFF = "staff"
RULES = {
    "login": PUBLIC,
    "logout": PUBLIC,
    # The web app manifest: browsers fetch it without credentials (tests/web/test_installable.py).
    "web-manifest": PUBLIC,
    "metrics": STAFF,
    "web-folders": SIGNED_IN,
    "web-inbox": SIGNED_IN,
    "web-invitation": SIGNED_IN,
    "web-drive-setup": SIGNED_IN,
    "web-folder-chat": FOLDER_VIEW,
    # A conversation by id: its author's alone (opening it in its folder's chat, a redirect).
    "web-conversation": AUTHOR,
    "web-file-document": FOLDER_VIEW,
    "web-folder-files": FOLDER_VIEW,
    "web-folder-search": FOLDER_VIEW,
    "web-folder-settings": FOLDER_VIEW,
    "web-folder-evaluate": FOLDER_VIEW,
    "web-folder-evaluate-feedback": FOLDER_VIEW,
    "web-organize-settings": SIGNED_IN,
    "web-api-tokens": SIGNED_IN,
    # The interface's language: the scripts' catalog, and the choice (a POST; anonymous: the cookie only).
    "javascript-catalog": PUBLIC,
    "web-language": PUBLIC,
    # allauth, mounted for Google sign-in only (SOCIALACCOUNT_ONLY): the steps of a sign-in and
    # the pages it may end on; the linked Google accounts of the signed-in user.
    "account_login": PUBLIC,
    "account_logout": PUBLIC,
    "account_inactive": PUBLIC,
    "google_login": PUBLIC,
    "google_callback": PUBLIC,
    "google_login_by_token": PUBLIC,
    "socialaccount_login_cancelled": PUBLIC,
    "socialaccount_login_error": PUBLIC,
    "socialaccount_signup": PUBLIC,
    "socialaccount_connections": SIGNED_IN,
}
SKIPPED_PREFIXES = ("api/", "admin/", "static/")
# allauth's account management: typing in any address (email), password signup and resets. Not
# mounted: addresses come only verified, from Google.
NEVER_MOUNTED = {"account_email", "account_signup", "account_change_password", "account_reset_password"}


CONVERTERS = {route.name: route.kwargs for route in ALL_ROUTES if not route.template.startswith(SKIPPED_PREFIXES)}
PAGES = sorted(CONVERTERS)


def test_every_page_has_a_row():
    assert set(PAGES) == set(RULES), "add each new page to RULES"


def test_allauth_account_management_is_not_mounted():
    assert NEVER_MOUNTED.isdisjoint(route.name for route in ALL_ROUTES)


@pytest.mark.parametrize("name", [name for name in PAGES if RULES.get(name) == PUBLIC])
def test_public_pages_answer_anyone(name, user, settings):
    """A sign-in step opened out of order says so (a 401 page) or moves on, never a 500."""
    google = settings.SOCIALACCOUNT_PROVIDERS["google"]
    settings.SOCIALACCOUNT_PROVIDERS = {"google": {**google, "APPS": [{"client_id": "id", "secret": "secret"}]}}
    url = reverse(name)
    for client in (_client(), _client(user)):
        response = client.get(url)
        assert response.status_code < 500, (url, response.status_code)


def _url(name, owned):
    if name == "web-invitation":
        _, token = invitation_create(
            folder=owned.folder, actor=owned.folder.owner, role="viewer", anyone_with_link=True
        )
        return reverse(name, kwargs={"token": token})
    return reverse(name, kwargs={k: v for k, v in owned.kwargs_for(name).items() if k in CONVERTERS[name]})


def _client(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.mark.parametrize("name", [name for name in PAGES if RULES.get(name) == STAFF])
def test_staff_pages(name, user, other_user, django_user_model):
    url = reverse(name)
    assert _client().get(url).status_code == 401, url
    for person in (user, other_user):
        assert _client(person).get(url).status_code == 403, url
    staff = django_user_model.objects.create_user(username="page-staff", is_staff=True)
    assert _client(staff).get(url).status_code == 200, url


@pytest.mark.parametrize("name", [name for name in PAGES if RULES.get(name) not in (PUBLIC, STAFF)])
def test_pages_by_role(name, owned, user, other_user, django_user_model):
    url = _url(name, owned)
    anonymous = _client().get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/"), (url, anonymous.status_code)

    assert _client(user).get(url).status_code == (302 if RULES[name] == AUTHOR else 200), url
    for role in ("viewer", "editor"):
        member = django_user_model.objects.create_user(username=f"page-{role}")
        FolderMembership.objects.create(folder=owned.folder, user=member, role=role)
        assert _client(member).get(url).status_code == (404 if RULES[name] == AUTHOR else 200), (url, role)
    stranger = _client(other_user).get(url).status_code
    assert stranger == (200 if RULES[name] == SIGNED_IN else 404), (url, stranger)

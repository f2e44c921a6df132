"""A share by email reaches only the account that has verified the address: typing someone
else's address into a profile (User.email, or an unverified EmailAddress) earns nothing."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.library.models import Folder, FolderMembership
from tests.support.accounts import email_address_add

pytestmark = pytest.mark.django_db

UNVERIFIED = "No account has verified this address; send an invitation link instead."


@pytest.fixture
def team_folder(user, tmp_path):
    return Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="team", status="ready")


def share(client: APIClient, folder: Folder, name: str):
    return client.post(f"/api/folders/{folder.pk}/members", {"username": name, "role": "viewer"}, format="json")


def test_an_address_typed_into_a_profile_receives_nothing(auth_client, team_folder, django_user_model):
    mallory = django_user_model.objects.create_user(username="mallory", email="bob@example.com")
    email_address_add(user=mallory, email="bob@example.com", verified=False)

    refused = share(auth_client, team_folder, "bob@example.com")

    assert refused.status_code == 400 and refused.json()["detail"] == UNVERIFIED
    assert not FolderMembership.objects.exists()
    assert auth_client.get(f"/api/folders/{team_folder.pk}/members").json()["results"] == []


def test_the_account_that_verified_the_address_receives_the_share(auth_client, team_folder, django_user_model):
    django_user_model.objects.create_user(username="mallory", email="bob@example.com")
    bob = django_user_model.objects.create_user(username="bob")
    email_address_add(user=bob, email="Bob@Example.com")

    added = share(auth_client, team_folder, "bob@example.com")

    assert added.status_code == 201 and added.json()["username"] == "bob"
    assert list(FolderMembership.objects.values_list("user__username", flat=True)) == ["bob"]


def test_a_share_by_username_needs_no_address(auth_client, team_folder, django_user_model):
    django_user_model.objects.create_user(username="carol")
    assert share(auth_client, team_folder, "carol").status_code == 201

"""A Drive folder is shared here only with people whose Google account can open it in Drive
(asked through the real client's permissions.list against the emulator), and each sync checks
again: a member who lost the folder in Drive loses it here, and gets it back with Drive."""

from __future__ import annotations

import pytest
from allauth.socialaccount.models import SocialAccount
from rest_framework.test import APIClient

from apps.core.models import AuditEntry
from apps.library.members import invitation_create
from apps.library.models import FolderMembership
from tests.support.drive_tree import run_sync

pytestmark = pytest.mark.django_db


@pytest.fixture
def bob(django_user_model):
    person = django_user_model.objects.create_user(username="bob")
    SocialAccount.objects.create(
        user=person, provider="google", uid="g-bob", extra_data={"email": "bob@example.com", "email_verified": True}
    )
    return person


@pytest.fixture
def bob_client(bob) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=bob)
    return client


def share(client, folder, name="bob", role="viewer"):
    return client.post(f"/api/folders/{folder.pk}/members", {"username": name, "role": role}, format="json")


def test_sharing_is_refused_while_drive_does_not_let_the_person_in(auth_client, folder, bob, state, tree):
    refused = share(auth_client, folder)
    assert refused.status_code == 400
    assert refused.json()["detail"] == (
        "bob's Google account (bob@example.com) cannot open this folder in Google Drive. "
        "Share it with them in Drive first."
    )
    assert not FolderMembership.objects.exists()

    state.permissions.share(tree.root, "bob@example.com")
    assert share(auth_client, folder).status_code == 201


def test_a_share_on_a_folder_above_counts_as_in_drive(auth_client, folder, bob, state, tree):
    state.permissions.share(state.MY_DRIVE_ID, "BOB@example.com", role="writer")
    assert share(auth_client, folder).status_code == 201


def test_someone_who_never_signed_in_with_google_cannot_be_checked(auth_client, folder, django_user_model):
    django_user_model.objects.create_user(username="carol")
    refused = share(auth_client, folder, name="carol")
    assert refused.status_code == 400 and "has not signed in with Google" in refused.json()["detail"]


def test_an_invitation_is_checked_when_it_is_used(bob_client, folder, bob, state, tree):
    _, token = invitation_create(folder=folder, actor=folder.owner, role="viewer", invitee="bob")
    refused = bob_client.post("/api/invitations/accept", {"token": token}, format="json")
    assert refused.status_code == 400 and "cannot open this folder in Google Drive" in refused.json()["detail"]

    state.permissions.share(tree.root, "bob@example.com")
    assert bob_client.post("/api/invitations/accept", {"token": token}, format="json").status_code == 200


def test_each_sync_rechecks_and_access_follows_drive(auth_client, bob_client, synced, bob, state, tree, capture):
    state.permissions.share(tree.root, "bob@example.com")
    assert share(auth_client, synced).status_code == 201
    assert bob_client.get(f"/api/folders/{synced.pk}").status_code == 200

    state.permissions.unshare(tree.root, "bob@example.com")
    assert run_sync(synced, capture) is not None
    assert bob_client.get(f"/api/folders/{synced.pk}").status_code == 404
    assert bob_client.get("/api/folders").json()["results"] == []
    members = auth_client.get(f"/api/folders/{synced.pk}/members").json()["results"]
    assert [m["username"] for m in members] == ["bob"]  # kept: the share comes back with Drive

    state.permissions.share(tree.root, "bob@example.com")
    assert run_sync(synced, capture) is not None
    assert bob_client.get(f"/api/folders/{synced.pk}").status_code == 200
    changes = AuditEntry.objects.filter(action="source_access").order_by("created_at")
    assert [entry.detail["drive_access"] for entry in changes] == ["lost", "restored"]


def test_a_sync_asks_drive_who_may_read_once_whatever_the_number_of_members(
    auth_client, synced, bob, state, tree, capture, django_user_model
):
    for number in range(3):
        person = django_user_model.objects.create_user(username=f"member-{number}")
        email = f"member-{number}@example.com"
        SocialAccount.objects.create(user=person, provider="google", uid=f"g-{number}", extra_data={"email": email})
        state.permissions.share(tree.root, email)
        assert share(auth_client, synced, name=person.username).status_code == 201
    state.reset_calls()

    assert run_sync(synced, capture) is not None

    assert state.calls["permissions.list"] == 1

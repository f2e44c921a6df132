"""Who an invitation admits: the named person only (a username, or an email that person has
verified), or anyone with the link when the owner chose that; the choice is never implied. The
claim itself re-checks the expiry, so a link that expires mid-request joins nobody."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.library import members
from apps.library.models import Folder, FolderInvitation, FolderMembership
from tests.support.accounts import email_address_add

pytestmark = pytest.mark.django_db

FOR_ANOTHER = "This invitation is for another account."


@pytest.fixture
def team_folder(user, tmp_path):
    return Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="team", status="ready")


def client_of(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def invite(auth_client, folder, **body):
    return auth_client.post(f"/api/folders/{folder.pk}/invitations", {"role": "viewer", **body}, format="json")


def accept(user, url: str):
    token = url.rstrip("/").rsplit("/", 1)[-1]
    return client_of(user).post("/api/invitations/accept", {"token": token}, format="json")


@pytest.mark.parametrize(
    "body",
    [{}, {"invitee": ""}, {"anyone_with_link": False}, {"invitee": "bob", "anyone_with_link": True}],
    ids=["nothing", "blank-invitee", "anyone-false", "both"],
)
def test_who_it_is_for_must_be_chosen(auth_client, team_folder, body):
    refused = invite(auth_client, team_folder, **body)
    assert refused.status_code == 400, refused.json()
    assert "Choose who the invitation is for" in str(refused.json())
    assert not FolderInvitation.objects.exists()


def test_an_invitation_by_email_admits_only_who_verified_it(auth_client, team_folder, django_user_model):
    bob = django_user_model.objects.create_user(username="bob")
    email_address_add(user=bob, email="bob@example.com")
    # Mallory typed bob's address into her profile; she never verified it.
    mallory = django_user_model.objects.create_user(username="mallory", email="bob@example.com")
    email_address_add(user=mallory, email="bob@example.com", verified=False)
    created = invite(auth_client, team_folder, invitee="Bob@Example.com")
    assert created.status_code == 201 and created.json()["anyone_with_link"] is False
    url = created.json()["url"]

    refused = accept(mallory, url)
    assert refused.status_code == 403 and refused.json()["detail"] == FOR_ANOTHER
    assert FolderInvitation.objects.get().accepted_at is None  # still bob's to use

    assert accept(bob, url).status_code == 200
    assert list(FolderMembership.objects.values_list("user__username", flat=True)) == ["bob"]


def test_an_invitation_by_username_admits_only_that_account(auth_client, team_folder, django_user_model):
    bob = django_user_model.objects.create_user(username="bob")
    carol = django_user_model.objects.create_user(username="carol")
    url = invite(auth_client, team_folder, invitee="bob").json()["url"]

    refused = accept(carol, url)
    assert refused.status_code == 403 and refused.json()["detail"] == FOR_ANOTHER
    assert accept(bob, url).status_code == 200


def test_anyone_with_the_link_is_an_explicit_choice(auth_client, team_folder, django_user_model):
    created = invite(auth_client, team_folder, anyone_with_link=True)
    assert created.status_code == 201 and created.json()["anyone_with_link"] is True
    assert created.json()["invitee"] == ""
    listed = auth_client.get(f"/api/folders/{team_folder.pk}/invitations").json()["results"]
    assert [item["anyone_with_link"] for item in listed] == [True]

    carol = django_user_model.objects.create_user(username="carol")
    assert accept(carol, created.json()["url"]).status_code == 200


def test_the_invitation_page_refuses_another_account(client, team_folder, django_user_model):
    _, token = members.invitation_create(folder=team_folder, actor=team_folder.owner, role="viewer", invitee="bob")
    client.force_login(django_user_model.objects.create_user(username="carol"))

    page = client.get(f"/invite/{token}/")
    assert page.status_code == 403 and FOR_ANOTHER.encode() in page.content
    assert client.post(f"/invite/{token}/").status_code == 403
    assert not FolderMembership.objects.exists()


def test_the_claim_rechecks_the_expiry(team_folder, django_user_model, monkeypatch):
    """The link is read while still valid and expires before the claim: the claim's own
    condition refuses it."""
    carol = django_user_model.objects.create_user(username="carol")
    invitation, token = members.invitation_create(
        folder=team_folder, actor=team_folder.owner, role="viewer", anyone_with_link=True
    )
    read = members.invitation_get

    def read_then_expire(*, token: str) -> FolderInvitation:
        found = read(token=token)
        FolderInvitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
        return found

    monkeypatch.setattr(members, "invitation_get", read_then_expire)
    with pytest.raises(members.ApplicationError, match="expired"):
        members.invitation_accept(token=token, user=carol)
    assert not FolderMembership.objects.exists()
    assert FolderInvitation.objects.get().accepted_at is None

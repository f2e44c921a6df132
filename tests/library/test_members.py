"""Sharing a folder: members and roles over the API, invitation links, the audit log, and a
revoked member's open event stream ending."""

from __future__ import annotations

import datetime as dt
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.core.models import AuditEntry
from apps.library.members import invitation_create, member_remove
from apps.library.models import Folder, FolderInvitation, FolderMembership
from apps.web.signup import INVITATION_SESSION_KEY
from tests.support.accounts import email_address_add
from tests.support.sse_client import parse_sse
from tests.support.tokens import api_token


@pytest.fixture
def bob(django_user_model):
    person = django_user_model.objects.create_user(username="bob", email="bob@example.com", password="bob-password")
    email_address_add(user=person, email="bob@example.com")
    return person


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_authenticate(user=bob)
    return client


@pytest.fixture
def team_folder(user, tmp_path):
    return Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="team", status="ready")


@pytest.mark.django_db
def test_the_owner_shares_changes_the_role_and_revokes(auth_client, bob_client, team_folder, bob):
    members_url = f"/api/folders/{team_folder.pk}/members"
    assert bob_client.get(f"/api/folders/{team_folder.pk}").status_code == 404

    added = auth_client.post(members_url, {"username": "bob@example.com", "role": "viewer"}, format="json")
    assert added.status_code == 201, added.json()
    assert added.json()["username"] == "bob" and added.json()["role"] == "viewer"
    listed = bob_client.get("/api/folders").json()["results"]
    assert [(f["name"], f["role"], f["owner"]) for f in listed] == [("team", "viewer", "alice")]
    refused = bob_client.post(f"/api/folders/{team_folder.pk}/reindex")
    assert refused.status_code == 403 and "Only an editor" in refused.json()["detail"]

    changed = auth_client.patch(f"{members_url}/{bob.pk}", {"role": "editor"}, format="json")
    assert changed.status_code == 200 and changed.json()["role"] == "editor"
    assert bob_client.post(f"/api/folders/{team_folder.pk}/reindex").status_code == 202
    assert bob_client.delete(f"/api/folders/{team_folder.pk}").status_code == 403

    assert auth_client.delete(f"{members_url}/{bob.pk}").status_code == 204
    assert bob_client.get(f"/api/folders/{team_folder.pk}").status_code == 404
    actions = list(
        AuditEntry.objects.filter(folder_id=team_folder.pk).order_by("created_at").values_list("action", "target")
    )
    assert actions == [("share", "bob"), ("role_change", "bob"), ("revoke", "bob")]
    audit = auth_client.get(f"/api/folders/{team_folder.pk}/audit").json()["results"]
    assert [entry["action"] for entry in audit] == ["revoke", "role_change", "share"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("payload", "status", "message"),
    [
        ({"username": "nobody", "role": "viewer"}, 400, "send them an invitation link"),
        ({"username": "alice", "role": "viewer"}, 409, "owner already"),
        ({"username": "bob", "role": "owner"}, 400, "Invalid input"),
    ],
)
def test_bad_shares_are_refused_with_a_reason(auth_client, team_folder, bob, payload, status, message):
    response = auth_client.post(f"/api/folders/{team_folder.pk}/members", payload, format="json")
    assert response.status_code == status
    assert message in str(response.json())
    assert not FolderMembership.objects.exists()


@pytest.mark.django_db
def test_an_invitation_link_joins_once_and_expires(auth_client, bob_client, team_folder, bob, django_user_model):
    created = auth_client.post(
        f"/api/folders/{team_folder.pk}/invitations", {"role": "editor", "invitee": "bob@example.com"}, format="json"
    )
    assert created.status_code == 201
    token = created.json()["url"].rstrip("/").rsplit("/", 1)[-1]
    assert not FolderInvitation.objects.filter(token_hash__contains=token).exists()  # only its hash is kept

    joined = bob_client.post("/api/invitations/accept", {"token": token}, format="json")
    assert joined.status_code == 200 and joined.json()["folder_name"] == "team"
    assert FolderMembership.objects.get(folder=team_folder, user=bob).role == "editor"

    carol = APIClient()
    carol.force_authenticate(user=django_user_model.objects.create_user(username="carol"))
    reused = carol.post("/api/invitations/accept", {"token": token}, format="json")
    assert reused.status_code == 400 and "already used" in reused.json()["detail"]

    invitation, stale = invitation_create(
        folder=team_folder, actor=team_folder.owner, role="viewer", anyone_with_link=True
    )
    FolderInvitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    expired = carol.post("/api/invitations/accept", {"token": stale}, format="json")
    assert expired.status_code == 400 and "expired" in expired.json()["detail"]
    forged = carol.post("/api/invitations/accept", {"token": "not-a-token"}, format="json")
    assert forged.status_code == 400 and "not valid" in forged.json()["detail"]
    assert FolderMembership.objects.filter(folder=team_folder).count() == 1


@pytest.mark.django_db
def test_the_invitation_page_asks_first_and_joins_on_post(client, team_folder, bob):
    _, token = invitation_create(folder=team_folder, actor=team_folder.owner, role="viewer", anyone_with_link=True)
    url = f"/invite/{token}/"
    assert client.get(url).status_code == 302  # log in first, then come back (next=)
    # Kept for the sign-in: a Google account may be created through it (apps/web/signup.py).
    assert client.session[INVITATION_SESSION_KEY] == token
    client.force_login(bob)

    page = client.get(url)
    assert page.status_code == 200 and b"invites you to <strong>team</strong>" in page.content
    assert not FolderMembership.objects.exists()  # a GET (a link preview) never joins

    joined = client.post(url)
    assert joined.status_code == 302 and joined["Location"] == f"/folders/{team_folder.pk}/"
    assert FolderMembership.objects.filter(folder=team_folder, user=bob, role="viewer").exists()
    assert INVITATION_SESSION_KEY not in client.session
    assert client.get(url).status_code == 400


@pytest.mark.django_db(transaction=True)
def test_a_revoked_members_open_event_stream_ends(asgi_server, team_folder, bob):
    membership = FolderMembership.objects.create(folder=team_folder, user=bob, role="viewer")
    token = api_token(bob)
    connected = threading.Event()

    def follow() -> list[str]:
        seen = []
        with httpx.stream(
            "GET",
            f"{asgi_server.url}/api/folders/{team_folder.pk}/events",
            headers={"Authorization": f"Token {token}"},
            timeout=20,
        ) as response:
            assert response.status_code == 200
            connected.set()
            for item in parse_sse(response.iter_lines()):
                if item.type != "comment":
                    seen.append(f"{item.type}:{item.data.get('message', '')}")
        return seen  # the server closed the stream

    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(follow)
        assert connected.wait(10)
        member_remove(membership=membership, actor=team_folder.owner)
        assert future.result(timeout=15) == ["error:You no longer have access to this folder."]

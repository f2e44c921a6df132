"""Personal API tokens: made, listed and revoked from a session; used as `Authorization: Bearer`;
stored as a digest; scoped; limited to folders; expired, revoked or unknown ones refused (401)."""

from __future__ import annotations

import datetime
import hashlib

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from apps.core.models import PersonalToken
from apps.library.models import Folder
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def _bearer(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def _folder(owner, tmp_path, name: str) -> Folder:
    (tmp_path / name).mkdir()
    return Folder.objects.create(owner=owner, source="local", external_id=str(tmp_path / name), name=name)


def test_a_token_is_made_shown_once_listed_without_its_secret_and_revoked(session, user):
    made = session.post("/api/tokens", {"name": "backup script", "scopes": ["read", "search"]}, format="json")
    assert made.status_code == 201, made.content
    secret = made.json()["token"]
    assert secret.startswith("fc_") and len(secret) > 40
    assert made.json()["prefix"] == secret[:11] and made.json()["expires_at"] is None

    listed = session.get("/api/tokens")
    assert listed.status_code == 200
    (row,) = listed.json()["results"]
    assert set(row) == {"id", "name", "prefix", "scopes", "folder_ids", "created_at", "expires_at", "last_used_at"}
    assert (row["name"], row["scopes"], row["folder_ids"]) == ("backup script", ["read", "search"], None)
    assert secret not in listed.content.decode()

    # Nothing in the row can be sent back as the token: only its digest and its public start are kept.
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM core_personaltoken WHERE id = %s", [row["id"]])
        stored = [str(value) for value in cursor.fetchone()]
    assert not any(secret in value for value in stored)
    assert hashlib.sha256(secret.encode()).hexdigest() in stored

    assert _bearer(secret).get("/api/folders").status_code == 200
    assert session.delete(f"/api/tokens/{row['id']}").status_code == 204
    refused = _bearer(secret).get("/api/folders")
    assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    assert session.get("/api/tokens").json()["results"] == []
    assert session.delete(f"/api/tokens/{row['id']}").status_code == 404


def test_another_users_token_cannot_be_revoked(session, other_user):
    theirs = PersonalToken.objects.create(user=other_user, name="x", prefix="fc_x", digest="0" * 64, scopes=["read"])
    assert session.delete(f"/api/tokens/{theirs.pk}").status_code == 404
    assert PersonalToken.objects.get(pk=theirs.pk).revoked_at is None


def test_a_token_cannot_manage_tokens(user):
    client = _bearer(api_token(user))
    for response in (client.get("/api/tokens"), client.post("/api/tokens", {"name": "x", "scopes": ["read"]})):
        assert response.status_code == 403
        assert "sign in" in response.json()["detail"]
    assert PersonalToken.objects.count() == 1


def test_bad_input_is_a_400_that_says_what(session, other_user, tmp_path):
    theirs = _folder(other_user, tmp_path, "theirs")
    cases = [
        ({"name": "x", "scopes": ["write"]}, "scopes"),
        ({"name": "x", "scopes": []}, "scopes"),
        ({"name": "x", "scopes": ["read"], "expires_in_days": 0}, "expires_in_days"),
        ({"name": "x", "scopes": ["read"], "folder_ids": []}, "folder_ids"),
        ({"scopes": ["read"]}, "name"),
    ]
    for body, field in cases:
        response = session.post("/api/tokens", body, format="json")
        assert response.status_code == 400, (body, response.content)
        assert field in response.json()["errors"], (body, response.json())
    # Another person's folder is refused as if it did not exist.
    response = session.post("/api/tokens", {"name": "x", "scopes": ["read"], "folder_ids": [theirs.pk]}, format="json")
    assert response.status_code == 400
    assert f"not found: {theirs.pk}" in response.json()["detail"]
    assert not PersonalToken.objects.exists()


def test_expired_revoked_and_unknown_tokens_are_401(session, user):
    made = session.post("/api/tokens", {"name": "short", "scopes": ["read"], "expires_in_days": 1}, format="json")
    secret = made.json()["token"]
    expires_at = datetime.datetime.fromisoformat(made.json()["expires_at"])
    assert abs(expires_at - (timezone.now() + datetime.timedelta(days=1))) < datetime.timedelta(minutes=1)
    assert _bearer(secret).get("/api/folders").status_code == 200
    PersonalToken.objects.update(expires_at=timezone.now() - datetime.timedelta(seconds=1))
    expired = _bearer(secret).get("/api/folders")
    assert expired.status_code == 401 and "expired" in expired.json()["detail"]
    assert expired["WWW-Authenticate"].startswith("Bearer")

    assert _bearer("fc_not-a-token").get("/api/folders").status_code == 401
    assert _bearer(secret[:-1]).get("/api/folders").status_code == 401
    malformed = APIClient()
    malformed.credentials(HTTP_AUTHORIZATION="Bearer two words")
    assert malformed.get("/api/folders").status_code == 401


def test_a_password_login_token_works_under_the_old_scheme_and_revokes_itself(api_client, user):
    secret = api_client.post("/api/auth/token", {"username": "alice", "password": "alice-password"}).json()["token"]
    old_scheme = APIClient()
    old_scheme.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    assert old_scheme.get("/api/folders").status_code == 200
    assert old_scheme.post("/api/auth/token/revoke").status_code == 204
    assert old_scheme.get("/api/folders").status_code == 401


def test_last_used_is_recorded_at_most_once_a_minute(user):
    secret = api_token(user)
    token = PersonalToken.objects.get()
    assert token.last_used_at is None
    _bearer(secret).get("/api/folders")
    first = PersonalToken.objects.get().last_used_at
    assert first is not None and timezone.now() - first < datetime.timedelta(seconds=10)
    _bearer(secret).get("/api/folders")
    assert PersonalToken.objects.get().last_used_at == first  # within the minute: not written again
    PersonalToken.objects.update(last_used_at=first - datetime.timedelta(minutes=2))
    _bearer(secret).get("/api/folders")
    assert PersonalToken.objects.get().last_used_at > first


def test_scopes_name_what_is_missing(user, tmp_path):
    folder = _folder(user, tmp_path, "docs")
    reader = _bearer(api_token(user, scopes=["read"]))
    assert reader.get(f"/api/folders/{folder.pk}").status_code == 200
    refused = reader.post(f"/api/folders/{folder.pk}/search", {"query": "lease"}, format="json")
    assert refused.status_code == 403 and "'search' scope" in refused.json()["detail"]
    refused = reader.post(f"/api/folders/{folder.pk}/sync")
    assert refused.status_code == 403 and "'manage' scope" in refused.json()["detail"]
    searcher = _bearer(api_token(user, scopes=["search"]))
    assert searcher.post(f"/api/folders/{folder.pk}/search", {"query": "lease"}, format="json").status_code == 200
    refused = searcher.get("/api/folders")
    assert refused.status_code == 403 and "'read' scope" in refused.json()["detail"]


def test_a_folder_limited_token_reaches_only_its_folders(user, tmp_path):
    allowed, other = _folder(user, tmp_path, "allowed"), _folder(user, tmp_path, "other")
    client = _bearer(api_token(user, scopes=["read", "search"], folder_ids=[allowed.pk]))
    assert [row["id"] for row in client.get("/api/folders").json()["results"]] == [allowed.pk]
    assert client.get(f"/api/folders/{allowed.pk}").status_code == 200
    assert client.get(f"/api/folders/{other.pk}").status_code == 404
    assert client.post(f"/api/folders/{other.pk}/search", {"query": "x"}, format="json").status_code == 404
    manager = _bearer(api_token(user, scopes=["manage"], folder_ids=[allowed.pk]))
    refused = manager.post("/api/folders", {"source": "local", "path": str(tmp_path / "new")}, format="json")
    assert refused.status_code == 403 and "cannot connect new ones" in refused.json()["detail"]
    # The session of the same person still sees both.
    session = APIClient()
    session.force_login(user)
    assert len(session.get("/api/folders").json()["results"]) == 2

import pytest

from apps.core.models import PersonalToken, TokenScope
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db


def test_token_obtain_and_use(api_client, user):
    response = api_client.post("/api/auth/token", {"username": "alice", "password": "alice-password"}, format="json")
    assert response.status_code == 200
    token = response.json()["token"]
    (made,) = PersonalToken.objects.filter(user=user)
    assert (made.name, made.scopes, made.prefix) == ("password login", TokenScope.values, token[:11])
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")  # the old scheme's word still works
    assert api_client.get("/api/folders").status_code == 200
    assert api_client.get("/api/folders").json()["results"] == []


def test_token_obtain_rejects_wrong_password_with_message(api_client, user):
    response = api_client.post("/api/auth/token", {"username": "alice", "password": "nope"}, format="json")
    assert response.status_code == 401
    assert "Invalid username or password" in response.json()["detail"]


def test_token_obtain_rejects_malformed_body(api_client):
    response = api_client.post("/api/auth/token", {"username": ""}, format="json")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"username", "password"}


def test_revoked_token_no_longer_authenticates(api_client, user):
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token(user, scopes=['search'])}")
    assert api_client.post("/api/auth/token/revoke").status_code == 204  # any scope may end itself
    assert api_client.get("/api/folders").status_code == 401
    assert PersonalToken.objects.get(user=user).revoked_at is not None


def test_anonymous_requests_are_refused(api_client):
    assert api_client.get("/api/folders").status_code == 401


def test_openapi_schema_and_docs_are_served(client):
    schema = client.get("/api/schema")
    assert schema.status_code == 200
    assert b"/api/folders" in schema.content
    assert client.get("/api/docs").status_code == 200
    docs = client.get("/api/docs")
    assert b"swagger-ui" in docs.content and b"/api/schema" in docs.content  # the UI, pointed at the schema

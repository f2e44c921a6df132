"""Every /api/ route by the owner's personal tokens, one scope at a time: each route and method has
the scope it needs below (a new route without a row fails the suite). A token with only that scope
gets through; one with every other scope gets 403 naming it. A token limited to another folder sees
nothing of this one, as if it were another user's."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from apps.core.api import ApplicationError
from apps.core.models import TokenScope
from apps.core.tokens import personal_token_create
from apps.library.models import Folder
from tests.hardening.test_access_matrix import (
    PUBLIC,
    ROUTES,
    SECRET,
    SESSION_ONLY,
    _call,
    _kwargs,
)
from tests.hardening.test_access_matrix import secret_owned as _secret_owned  # noqa: F401  (a fixture)
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db

R, S, C, M = TokenScope.READ, TokenScope.SEARCH, TokenScope.CHAT, TokenScope.MANAGE
ANY, SESSION = "any", "session"

SCOPES: dict[str, dict[str, str]] = {
    "agent-metrics": {"get": R},
    "attachment-content": {"get": R},
    "auth-token-revoke": {"post": ANY},  # a token may always end itself
    "conversation-archive": {"post": C},
    "conversation-detail": {"get": R, "patch": C, "delete": C},
    "conversation-regenerate": {"post": C},
    "conversations": {"get": R},
    "drive-callback": {"get": M},
    "drive-connect": {"get": R},
    "drive-disconnect": {"post": M},
    "drive-folders": {"get": R},
    "drive-status": {"get": R},
    "evaluation-detail": {"get": R, "patch": M, "delete": M},
    "evaluation-run-detail": {"get": R},
    "evaluation-runs": {"post": C},  # answering the questions, as a chat does
    "file-chunks": {"get": R},
    "file-content": {"get": R},
    "file-detail": {"get": R},
    "file-retry": {"post": M},
    "folder-audit": {"get": R},
    "folder-chat": {"post": C},
    "folder-detail": {"get": R, "patch": M, "delete": M},
    "folder-evaluations": {"get": R, "post": M},
    "folder-evaluations-generate": {"post": M},
    "folder-feedback": {"get": R},
    "folder-events": {"get": R},
    "folder-files": {"get": R},
    "folder-files-retry": {"post": M},
    "folder-invitation-detail": {"delete": M},
    "folder-invitations": {"get": R, "post": M},
    "folder-member-detail": {"patch": M, "delete": M},
    "folder-members": {"get": R, "post": M},
    "folder-reindex": {"post": M},
    "folder-search": {"post": S},
    "folder-sync": {"post": M},
    "folder-sync-log": {"get": R},
    "folders": {"get": R, "post": M},
    "inbox-conversation-archive": {"post": C},
    "inbox-conversation-detail": {"get": R},
    "inbox-conversation-messages": {"post": C},
    "inbox-conversations": {"get": R, "post": C},
    "inbox-events": {"get": R},
    "inbox-files": {"post": M},
    "inbox-files-unsuggested": {"get": R},
    "inbox-folder-tree": {"get": R},
    "inbox-guideline-proposal-respond": {"post": M},
    "inbox-move-undo": {"post": M},
    "inbox-moves": {"get": R},
    "inbox-organize": {"post": M},
    "inbox-suggestion-respond": {"post": M},
    "inbox-suggestions": {"get": R},
    "inbox-suggestions-accept-all": {"post": M},
    "invitation-accept": {"post": M},
    "organization-settings": {"get": R, "put": M},
    "queue-metrics": {"get": R},
    "message-feedback": {"post": C},
    "message-evaluation-question": {"post": M},
    "answer-continue": {"post": C},
    "run-cancel": {"post": C},
    "run-detail": {"get": C},
    "run-events": {"get": C},
    "tokens": {"get": SESSION, "post": SESSION},
    "usage": {"get": R},
    "quota": {"get": R},
    "token-detail": {"delete": SESSION},
}

CHECKED = [route for route in ROUTES if route.name not in PUBLIC]


def test_every_route_and_method_has_a_scope_row():
    missing = [
        (route.name, method)
        for route in CHECKED
        for method in route.methods
        if method not in SCOPES.get(route.name, {})
    ]
    assert missing == [], "add these to SCOPES with the scope a token needs"
    assert set(SCOPES) == {route.name for route in CHECKED}, "SCOPES names a route that no longer exists"


def _token_client(user, *, scopes, folder_ids=None) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token(user, scopes=scopes, folder_ids=folder_ids)}")
    return client


def _body(response) -> bytes:
    if response.streaming:
        response.close()
        return b""
    return response.content


@pytest.mark.parametrize("route", CHECKED, ids=lambda r: r.name)
def test_a_token_needs_the_routes_scope(route, owned, user):
    user.is_staff = True  # the queues are for staff: here only the scope is in question
    user.save(update_fields=["is_staff"])
    url = reverse(route.name, kwargs=_kwargs(route.name, owned))
    for method in sorted(route.methods, key=lambda m: m == "delete"):
        needed = SCOPES[route.name][method]
        others = [scope for scope in TokenScope.values if scope != needed]
        refused = _call(_token_client(user, scopes=others), method, url)
        body = _body(refused)
        if needed == SESSION:
            assert refused.status_code == 403 and b"sign in" in body, (method, url, refused.status_code, body[:300])
            continue
        if needed != ANY:
            assert refused.status_code == 403, (method, url, refused.status_code, body[:300])
            assert f"'{needed}' scope".encode() in body, body[:300]
        allowed = _call(_token_client(user, scopes=[R] if needed == ANY else [needed]), method, url)
        body = _body(allowed)
        assert allowed.status_code not in (401, 403, 404), (method, url, allowed.status_code, body[:300])
        assert allowed.status_code < 500, (method, url, allowed.status_code, body[:300])


@pytest.fixture
def elsewhere(user, tmp_path) -> Folder:
    """Another folder of the owner's, the only one the limited tokens below reach."""
    (tmp_path / "elsewhere").mkdir()
    return Folder.objects.create(owner=user, source="local", external_id=str(tmp_path / "elsewhere"), name="elsewhere")


@pytest.mark.parametrize("route", [r for r in CHECKED if r.name not in SESSION_ONLY], ids=lambda r: r.name)
def test_a_token_limited_to_another_folder_sees_nothing_of_this_one(route, request, user, elsewhere):
    owned = request.getfixturevalue("_secret_owned")  # the access matrix's, its objects marked SECRET
    url = reverse(route.name, kwargs=_kwargs(route.name, owned))
    client = _token_client(user, scopes=TokenScope.values, folder_ids=[elsewhere.pk])
    for method in sorted(route.methods, key=lambda m: m == "delete"):
        response = _call(client, method, url)
        body = _body(response)
        assert response.status_code < 500, (method, url, response.status_code, body[:300])
        assert SECRET.encode() not in body, (method, url, body[:300])
        if {"folder_id", "file_id"} & set(route.kwargs):
            assert response.status_code == 404, (method, url, response.status_code, body[:300])


def test_a_limited_token_lists_only_its_folders(owned, user, elsewhere):
    mine = _token_client(user, scopes=[R], folder_ids=[elsewhere.pk]).get("/api/folders").json()["results"]
    assert [folder["id"] for folder in mine] == [elsewhere.pk]
    everything = _token_client(user, scopes=[R]).get("/api/folders").json()["results"]
    assert {folder["id"] for folder in everything} == {owned.folder.pk, elsewhere.pk}


def test_a_token_cannot_be_limited_to_a_folder_its_maker_cannot_see(user, other_user, owned):
    with pytest.raises(ApplicationError, match="not found"):
        personal_token_create(user=other_user, name="x", scopes=[R], folder_ids=[owned.folder.pk])

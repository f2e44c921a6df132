"""Every /api/ route (enumerated from the URL resolver, so new ones are covered) by owner, other user,
anonymous: anonymous is refused, another user sees nothing of the owner's, the owner gets through."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from apps.library.models import Chunk
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db

# Routes open to anyone, by design.
PUBLIC = {"auth-token", "schema", "docs"}
# Token management needs a signed-in session (a token gets 403): called with one here.
SESSION_ONLY = {"tokens", "token-detail"}
# For the site's staff, not a folder's owner (tests/core/test_queue_metrics.py: staff get through).
STAFF_ONLY = {"queue-metrics"}
# Marker strings in the owner's objects; none may ever reach another user.
SECRET = "owner-secret"


@dataclass(frozen=True)
class Route:
    name: str
    template: str
    kwargs: tuple[str, ...]
    methods: tuple[str, ...]


def _methods(callback) -> tuple[str, ...]:
    view = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if view is None:  # a function view (the SSE stream is @require_GET)
        return ("get",)
    found = [m for m in ("get", "post", "put", "patch", "delete") if hasattr(view, m)]
    return tuple(found)


def _walk(patterns, prefix: str = "") -> Iterator[Route]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            template = prefix + str(pattern.pattern)
            if pattern.name:
                kwargs = tuple(sorted(pattern.pattern.converters))
                yield Route(pattern.name, template, kwargs, _methods(pattern.callback))


# Every named route of the URL conf (the page matrix reads the pages from here too).
ALL_ROUTES = sorted(_walk(get_resolver().url_patterns), key=lambda r: r.name)
ROUTES = [route for route in ALL_ROUTES if route.template.startswith("api/")]


def test_the_matrix_sees_every_api_route():
    names = {route.name for route in ROUTES}
    assert {"folders", "folder-chat", "run-events", "inbox-moves", "folder-search"} <= names
    assert len(ROUTES) >= 25
    # Each route is called once per method below: a route with none found would pass unchecked.
    assert [route.name for route in ROUTES if not route.methods] == []


def _call(client: APIClient, method: str, url: str):
    if method in ("post", "put", "patch"):
        return getattr(client, method)(url, {}, format="json")
    return getattr(client, method)(url)


def _client(user=None, *, route: str = "") -> APIClient:
    """Authenticated by a real token, as API clients are (the SSE view reads the header itself);
    by a session for the routes only a session may call."""
    client = APIClient()
    if user is not None and route in SESSION_ONLY:
        client.force_login(user)
    elif user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token(user)}")
    return client


@pytest.fixture
def secret_owned(owned):
    owned.folder.name = f"{SECRET}-folder"
    owned.folder.save(update_fields=["name"])
    owned.file.name = f"{SECRET}-file.txt"
    owned.file.save(update_fields=["name"])
    for conversation in (owned.conversation, owned.inbox_conversation):
        conversation.title = f"{SECRET}-conversation"
        conversation.save(update_fields=["title"])
    # The file's bytes on disk and its indexed text, for the content and chunks endpoints.
    Path(owned.folder.external_id, owned.file.path).write_text(f"{SECRET} note")
    Chunk.objects.create(file=owned.file, folder=owned.folder, chunk_index=0, text=f"{SECRET} chunk", location={})
    owned.attachment.data = f"{SECRET} image".encode()
    owned.attachment.save(update_fields=["data"])
    return owned


# GET routes that show the owner the marked objects, so the check that another user never sees
# SECRET looks for something that is really there to leak.
SHOWS_SECRET = {
    "folders",
    "folder-detail",
    "folder-files",
    "file-detail",
    "file-content",
    "file-chunks",
    "conversations",
    "conversation-detail",
    "inbox-conversation-detail",
    "attachment-content",
}


def test_the_owner_sees_the_marked_objects(secret_owned, user):
    assert {route.name for route in ROUTES} >= SHOWS_SECRET
    for name in sorted(SHOWS_SECRET):
        url = reverse(name, kwargs=_kwargs(name, secret_owned))
        response = _client(user).get(url)
        assert response.status_code == 200, (url, response.status_code)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert SECRET.encode() in body, (url, body[:300])


def _kwargs(name: str, owned) -> dict[str, object]:
    (route,) = [route for route in ROUTES if route.name == name]
    return {k: v for k, v in owned.kwargs_for(name).items() if k in route.kwargs}


@pytest.mark.parametrize("route", [r for r in ROUTES if r.name not in PUBLIC], ids=lambda r: r.name)
def test_anonymous_is_refused(route: Route, secret_owned):
    url = reverse(route.name, kwargs=_kwargs(route.name, secret_owned))
    for method in route.methods:
        response = _call(_client(), method, url)
        assert response.status_code in (401, 403), (method, url, response.status_code)


@pytest.mark.parametrize("route", [r for r in ROUTES if r.name not in PUBLIC], ids=lambda r: r.name)
def test_another_user_sees_nothing_of_the_owners(route: Route, secret_owned, other_user):
    url = reverse(route.name, kwargs=_kwargs(route.name, secret_owned))
    for method in route.methods:
        response = _call(_client(other_user, route=route.name), method, url)
        body = b"" if response.streaming else response.content
        assert response.status_code < 500, (method, url, response.status_code, body[:300])
        assert SECRET.encode() not in body, (method, url, body[:300])
        if route.kwargs:
            # An object of someone else's is indistinguishable from one that does not exist.
            assert response.status_code == 404, (method, url, response.status_code, body[:300])


@pytest.mark.parametrize("route", [r for r in ROUTES if r.name not in PUBLIC], ids=lambda r: r.name)
def test_the_owner_gets_through(route: Route, secret_owned, user):
    url = reverse(route.name, kwargs=_kwargs(route.name, secret_owned))
    # DELETE last: it removes the object the other methods point at.
    for method in sorted(route.methods, key=lambda m: m == "delete"):
        response = _call(_client(user, route=route.name), method, url)
        body = b"" if response.streaming else response.content
        assert response.status_code < 500, (method, url, response.status_code, body[:300])
        if route.name in STAFF_ONLY:
            assert response.status_code == 403, (method, url, response.status_code, body[:300])
        else:
            assert response.status_code not in (401, 403, 404), (method, url, response.status_code, body[:300])
        if response.streaming:
            response.close()


def test_usage_is_only_the_callers_own(secret_owned, user, other_user):
    """`/api/usage` takes no object id: another user's answer is their own totals, never the owner's."""
    from apps.llm.models import UsageRecord

    UsageRecord.objects.create(user=user, provider="openai", model=f"{SECRET}-model", input_tokens=7)
    url = reverse("usage")
    assert SECRET in _client(user).get(url, {"group_by": "model"}).content.decode()
    response = _client(other_user).get(url, {"group_by": "model"})
    assert response.status_code == 200 and SECRET not in response.content.decode()
    assert response.json()["totals"]["tokens"]["input"] == 0
    assert _client(other_user).get(url, {"user": user.pk}).status_code == 403


def test_quota_is_only_the_callers_own(secret_owned, user, other_user):
    """`/api/quota` takes no object id: another user's answer counts their own folders, never the owner's."""
    url = reverse("quota")
    assert _client(user).get(url).json()["used"]["folders"] == 1
    assert _client(other_user).get(url).json()["used"] == {"folders": 0, "files": 0, "bytes": 0, "chunks": 0}

"""Under ASGI (uvicorn, gunicorn's uvicorn workers) the middleware chain runs in sync mode, so a
request crosses into a worker thread a fixed few times, not twice more for every middleware: each
crossing costs the web process CPU under load (bench/README.md, "The middleware chain")."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import AsyncToSync, SyncToAsync
from django.conf import settings
from django.db import OperationalError
from django.test import AsyncClient

from apps.library import apis
from tests.support.chat_library import make_folder
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db(transaction=True)

# Django's own, whatever the middleware: the request_started signal, into the chain's thread, back to
# the event loop for the handler's async core, CSRF's process_view, the view, rendering DRF's
# response, closing it (request_finished). With the mixin middlewares in async mode: 20.
MOST_CROSSINGS = 7


def _crossings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    for adapter in (SyncToAsync, AsyncToSync):
        original = adapter.__call__

        def counted(self, *args, _original=original, _name=adapter.__name__, **kwargs):
            wrapped = getattr(self, "func", None) or getattr(self, "awaitable", None)
            seen.append(f"{_name}: {getattr(wrapped, '__qualname__', wrapped)}")
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(adapter, "__call__", counted)
    return seen


def test_an_api_request_crosses_threads_a_fixed_few_times_whatever_the_middleware_count(user, monkeypatch):
    folder = make_folder(user)
    headers = {"Authorization": f"Bearer {api_token(user)}"}
    crossings = _crossings(monkeypatch)

    response = asyncio.run(AsyncClient().get(f"/api/folders/{folder.pk}", headers=headers))

    assert response.status_code == 200, (response.content, crossings)
    assert response.json()["id"] == folder.pk
    assert len(settings.MIDDLEWARE) > MOST_CROSSINGS
    assert 0 < len(crossings) <= MOST_CROSSINGS, crossings
    assert not [name for name in crossings if "process_request" in name or "process_response" in name]


def test_a_database_error_still_answers_503_through_the_sync_chain(user, monkeypatch):
    def down(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(apis, "folder_access", down)
    headers = {"Authorization": f"Bearer {api_token(user)}"}

    response = asyncio.run(AsyncClient().get(f"/api/folders/{make_folder(user).pk}", headers=headers))

    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "temporarily unavailable" in response.json()["detail"]

"""PostgreSQL or Redis unreachable: the web answers 503 with a JSON message (and SSE an `error`
event), never a 500 traceback or a hang. Simulated with a uvicorn process pointed at a closed
port, so the shared embedded services are never stopped."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from tests.support.servers import BASE_DIR, free_port, start_uvicorn, test_database_env
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def _server(**env_overrides: str) -> Iterator[str]:
    env = test_database_env(
        EMBEDDING_PROVIDER="hash", LLM_PROVIDER="extractive", SSE_HEARTBEAT_SECONDS="0.3", **env_overrides
    )
    port = free_port()
    log_path = BASE_DIR / "var" / f"test-hard-asgi-{os.getpid()}-{port}.log"
    try:
        # healthy=False: with a service down /readyz is a 503, and that answer is the point.
        with start_uvicorn(env=env, log_path=log_path, port=port, healthy=False) as server:
            yield server.url
    finally:
        log_path.unlink(missing_ok=True)


def test_database_down_is_a_503_with_a_json_message(user):
    token = api_token(user)
    closed = free_port()
    with _server(DATABASE_URL=f"postgresql://nobody:x@127.0.0.1:{closed}/nothing") as url:
        health = httpx.get(f"{url}/readyz", timeout=10)
        assert health.status_code == 503 and health.json()["failed"] == ["database"]
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200  # alive: no restart for an outage
        headers = {"Authorization": f"Bearer {token}"}
        for path in ("/api/folders", "/api/conversations", "/api/inbox/moves"):
            response = httpx.get(f"{url}{path}", headers=headers, timeout=10)
            assert response.status_code == 503, (path, response.status_code, response.text[:300])
            assert "unavailable" in response.json()["detail"]
            assert "Traceback" not in response.text
        response = httpx.post(f"{url}/api/auth/token", json={"username": "alice", "password": "x"}, timeout=10)
        assert response.status_code == 503, response.text[:300]


def test_redis_down_is_a_503_health_and_an_sse_error_event_not_a_hang(owned, user):
    token = api_token(user)
    closed = free_port()
    with _server(REDIS_URL=f"redis://127.0.0.1:{closed}/0") as url:
        health = httpx.get(f"{url}/readyz", timeout=10)
        assert health.status_code == 503 and health.json()["failed"] == ["redis"]
        assert health.json()["checks"]["database"]["ok"]
        started = time.monotonic()
        with httpx.stream(
            "GET", f"{url}/api/runs/{owned.run.pk}/events", headers={"Authorization": f"Bearer {token}"}, timeout=10
        ) as response:
            body = response.read().decode()
        assert time.monotonic() - started < 10
        assert response.status_code == 200
        assert "event: error" in body and "unavailable" in body

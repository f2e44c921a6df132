"""PostgreSQL or Redis unreachable: the web answers 503 with a JSON message (and SSE an `error`
event), never a 500 traceback or a hang. Simulated with a uvicorn process pointed at a closed
port, so the shared embedded services are never stopped."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from tests.conftest import BASE_DIR, _database_url_of_current_connection

pytestmark = pytest.mark.django_db(transaction=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def _server(**env_overrides: str) -> Iterator[str]:
    port = _free_port()
    log_path = BASE_DIR / "var" / f"test-hard-asgi-{os.getpid()}-{port}.log"
    env = {
        **os.environ,
        "DATABASE_URL": _database_url_of_current_connection(),
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "EMBEDDING_PROVIDER": "hash",
        "LLM_PROVIDER": "extractive",
        "SSE_HEARTBEAT_SECONDS": "0.3",
        **env_overrides,
    }
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port)],
            cwd=BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"uvicorn exited early:\n{log_path.read_text()[-3000:]}")
            try:
                httpx.get(f"{url}/healthz", timeout=5)
                break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn not ready:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log_path.unlink(missing_ok=True)


def test_database_down_is_a_503_with_a_json_message(user):
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=user)
    closed = _free_port()
    with _server(DATABASE_URL=f"postgresql://nobody:x@127.0.0.1:{closed}/nothing") as url:
        health = httpx.get(f"{url}/healthz", timeout=10)
        assert health.status_code == 503 and health.json()["database"].startswith("error")
        headers = {"Authorization": f"Token {token.key}"}
        for path in ("/api/folders", "/api/conversations", "/api/inbox/moves"):
            response = httpx.get(f"{url}{path}", headers=headers, timeout=10)
            assert response.status_code == 503, (path, response.status_code, response.text[:300])
            assert "unavailable" in response.json()["detail"]
            assert "Traceback" not in response.text
        response = httpx.post(f"{url}/api/auth/token", json={"username": "alice", "password": "x"}, timeout=10)
        assert response.status_code == 503, response.text[:300]


def test_redis_down_is_a_503_health_and_an_sse_error_event_not_a_hang(owned, user):
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=user)
    closed = _free_port()
    with _server(REDIS_URL=f"redis://127.0.0.1:{closed}/0") as url:
        health = httpx.get(f"{url}/healthz", timeout=10)
        assert health.status_code == 503 and health.json()["redis"].startswith("error")
        assert health.json()["database"] == "ok"
        started = time.monotonic()
        with httpx.stream(
            "GET", f"{url}/api/runs/{owned.run.pk}/events", headers={"Authorization": f"Token {token.key}"}, timeout=10
        ) as response:
            body = response.read().decode()
        assert time.monotonic() - started < 10
        assert response.status_code == 200
        assert "event: error" in body and "unavailable" in body

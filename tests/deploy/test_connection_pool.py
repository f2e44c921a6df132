"""The web process pools its database connections (DB_POOL_MAX_SIZE, config/settings.py).

Started as the Procfile's web line and as the image's CMD (gunicorn with deploy/gunicorn.conf.py)
start it, the server serves many requests on a few PostgreSQL backends that stay open; without the
pool each request opens one of its own. Open event streams give theirs back, so a few open pages
never take the whole pool. Backends are counted by PostgreSQL itself: `pg_stat_database.sessions`
(every backend ever started on the test database) and `pg_stat_activity` (those open now, by the
server's application_name).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from apps.library.models import Folder
from config.settings import _database_from_url
from tests.support.servers import (
    RunningServer,
    database_url_of_current_connection,
    free_port,
    image_command,
    procfile_command,
    start_web,
    test_database_env,
)
from tests.support.tokens import api_token
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

APPLICATION_NAME = "pool-test"
REQUESTS = 40  # more than any pool here holds: without one, as many backends
PROCFILE_POOL = 16  # the Procfile's web line
IMAGE_POOL = 2 * 8  # WEB_CONCURRENCY processes x deploy/gunicorn.conf.py's DB_POOL_MAX_SIZE


def _server_env(**overrides: str) -> dict[str, str]:
    url = database_url_of_current_connection()
    separator = "&" if "?" in url else "?"
    return test_database_env(DATABASE_URL=f"{url}{separator}application_name={APPLICATION_NAME}", **overrides)


@contextmanager
def _procfile_web(env: dict[str, str], log_path: Path) -> Iterator[RunningServer]:
    port = free_port()
    prefix, args = procfile_command("web", env={**env, "WEB_PORT": str(port)})
    # /healthz: /readyz would open connections of its own (its database check).
    with start_web(args, prefix=prefix, env=env, log_path=log_path, port=port, healthy=False) as server:
        yield server


@contextmanager
def _image_web(env: dict[str, str], log_path: Path) -> Iterator[RunningServer]:
    port = free_port()
    env = {**env, "GUNICORN_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "2"}
    with start_web(image_command(), env=env, log_path=log_path, port=port, healthy=False) as server:
        yield server


def _sessions_started() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


def _server_backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [APPLICATION_NAME])
        return int(cursor.fetchone()[0])


def _list_folders(url: str, token: str, count: int) -> None:
    """Half one after another, half 4 at a time; each request reads the database (the token, the folders)."""

    def get(_: int) -> int:
        return httpx.get(f"{url}/api/folders", headers={"Authorization": f"Bearer {token}"}, timeout=30).status_code

    statuses = [get(i) for i in range(count // 2)]
    with ThreadPoolExecutor(4) as pool:
        statuses += list(pool.map(get, range(count - count // 2)))
    assert statuses == [200] * count


@pytest.mark.parametrize(("launch", "pool_max"), [(_procfile_web, PROCFILE_POOL), (_image_web, IMAGE_POOL)])
def test_the_web_process_serves_its_requests_on_a_few_kept_backends(launch, pool_max, user, tmp_path):
    token = api_token(user)
    # The Kubernetes ConfigMap's DB_CONN_MAX_AGE reaches the web too: pooled, it is ignored.
    env = _server_env(DB_CONN_MAX_AGE="60")
    before = _sessions_started()
    with launch(env, tmp_path / "web.log") as web:
        _list_folders(web.url, token, REQUESTS)
        open_at_end = _server_backends()
    wait_for(lambda: _server_backends() == 0, what="the server's backends to exit")
    wait_for(lambda: _sessions_started() - before >= open_at_end, what="their exits to reach the statistics")
    assert 1 <= open_at_end <= pool_max
    # Every backend the server ever started was still open at the end: none per request.
    assert _sessions_started() - before == open_at_end


def test_without_the_pool_each_request_starts_a_backend_of_its_own(user, tmp_path):
    token = api_token(user)
    before = _sessions_started()
    with _procfile_web(_server_env(DB_POOL_MAX_SIZE="0"), tmp_path / "web.log") as web:
        _list_folders(web.url, token, REQUESTS)
        wait_for(lambda: _server_backends() == 0, what="each request's backend to exit")
    wait_for(lambda: _sessions_started() - before >= REQUESTS, what="a backend per request", timeout=30)


def test_open_event_streams_give_their_connection_back_to_the_pool(user, tmp_path):
    token = api_token(user)
    headers = {"Authorization": f"Bearer {token}"}
    folder = Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="notes")
    # Each stream checks the reader's access at every heartbeat, on a pooled connection.
    env = _server_env(DB_POOL_MAX_SIZE="2", SSE_HEARTBEAT_SECONDS="0.5")
    with _procfile_web(env, tmp_path / "web.log") as web, ExitStack() as streams:
        readers = []  # kept: a reader collected would close its stream
        for _ in range(3):  # more streams than the pool's connections, each past its view's checks
            response = streams.enter_context(
                httpx.stream("GET", f"{web.url}/api/folders/{folder.pk}/events", headers=headers, timeout=20)
            )
            readers.append(response.iter_lines())
            assert [next(readers[-1]) for _ in range(3)] == [": ping", "", ": ping"]  # two heartbeats
        listing = httpx.get(f"{web.url}/api/folders", headers=headers, timeout=5)
        assert listing.status_code == 200
        # The streams were open all along: each still sends its heartbeats.
        assert [next(reader) for reader in readers for _ in range(2)] == ["", ": ping"] * 3
        assert _server_backends() <= 2


@pytest.mark.parametrize(
    ("env", "pool", "max_age"),
    [
        ({}, None, 60),
        ({"DB_POOL_MAX_SIZE": "0", "DB_POOL_MIN_SIZE": "4"}, None, 60),
        ({"DB_POOL_MAX_SIZE": "8"}, {"min_size": 1, "max_size": 8}, 0),
        ({"DB_POOL_MAX_SIZE": "8", "DB_POOL_MIN_SIZE": "0"}, {"min_size": 0, "max_size": 8}, 0),
        ({"DB_POOL_MAX_SIZE": "3", "DB_POOL_MIN_SIZE": "3"}, {"min_size": 3, "max_size": 3}, 0),
    ],
)
def test_the_pool_settings_and_persistent_connections_exclude_each_other(monkeypatch, env, pool, max_age):
    monkeypatch.setenv("DB_CONN_MAX_AGE", "60")
    for name in ("DB_POOL_MAX_SIZE", "DB_POOL_MIN_SIZE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    database = _database_from_url("postgresql://app:secret@db.internal:5432/chat?sslmode=require")
    options = database["OPTIONS"]
    assert isinstance(options, dict)
    assert options.get("pool") == pool and options["sslmode"] == "require"
    assert database["CONN_MAX_AGE"] == max_age


@pytest.mark.parametrize(("max_size", "min_size"), [("4", "5"), ("-1", ""), ("2", "-1")])
def test_a_pool_smaller_than_its_minimum_or_negative_is_refused_by_name(monkeypatch, max_size, min_size):
    monkeypatch.setenv("DB_POOL_MAX_SIZE", max_size)
    monkeypatch.setenv("DB_POOL_MIN_SIZE", min_size)
    with pytest.raises(ImproperlyConfigured, match=rf"DB_POOL_MAX_SIZE={max_size}, DB_POOL_MIN_SIZE="):
        _database_from_url("postgresql://app:secret@db.internal:5432/chat")

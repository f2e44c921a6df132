"""Fixtures over the real services: the embedded PostgreSQL (+pgvector) and Redis."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="alice", password="alice-password")


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user(username="mallory", password="mallory-password")


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def auth_client(user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user=user)
    return client


@pytest.fixture
def other_client(other_user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user=other_user)
    return client


def _database_url_of_current_connection() -> str:
    from django.db import connection

    params = connection.settings_dict
    host = params["HOST"] or "127.0.0.1"
    if host.startswith("/"):
        return f"postgresql://{quote(params['USER'])}:@/{params['NAME']}?host={host}"
    credentials = f"{quote(params['USER'])}:{quote(params['PASSWORD'])}"
    return f"postgresql://{credentials}@{host}:{params['PORT'] or 5432}/{params['NAME']}"


@pytest.fixture
def celery_worker_process(transactional_db) -> Iterator[subprocess.Popen[bytes]]:
    """A real `celery worker` process consuming every queue, on the test database.

    Tests that use it must be transactional: the worker sees only committed rows.
    """
    from django.conf import settings

    env = {
        **os.environ,
        "DATABASE_URL": _database_url_of_current_connection(),
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "EMBEDDING_PROVIDER": settings.EMBEDDING_PROVIDER,
        "LLM_PROVIDER": settings.LLM_PROVIDER,
    }
    log_path = BASE_DIR / "var" / f"test-worker-{os.getpid()}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--pool=solo",
                "--loglevel=INFO",
                "-Q",
                "indexing,backfill,sync,organize,agent,default",
                "--without-gossip",
                "--without-mingle",
                f"--hostname=test-{os.getpid()}-{time.monotonic_ns()}@localhost",
            ],
            cwd=BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_for_worker(log_path, process)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


def _wait_for_worker(log_path: Path, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"celery worker exited early:\n{log_path.read_text()[-3000:]}")
        if "ready." in log_path.read_text():
            return
        time.sleep(0.2)
    raise RuntimeError(f"celery worker not ready after {timeout}s:\n{log_path.read_text()[-3000:]}")

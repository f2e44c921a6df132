"""Fixtures over the real services: the embedded PostgreSQL (+pgvector) and Redis."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from tests.support.servers import BASE_DIR, start_celery_worker, test_database_env


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


@pytest.fixture
def celery_worker_process(transactional_db) -> Iterator[subprocess.Popen[bytes]]:
    """A real `celery worker` process consuming every queue, on the test database.

    Tests that use it must be transactional: the worker sees only committed rows.
    """
    from django.conf import settings

    env = test_database_env(EMBEDDING_PROVIDER=settings.EMBEDDING_PROVIDER, LLM_PROVIDER=settings.LLM_PROVIDER)
    with start_celery_worker(
        env=env,
        queues=["indexing", "backfill", "sync", "organize", "agent", "default"],
        log_path=BASE_DIR / "var" / f"test-worker-{os.getpid()}.log",
    ) as process:
        yield process

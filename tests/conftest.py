"""Fixtures over the real services: the embedded PostgreSQL (+pgvector) and Redis; model providers
and the Drive emulator shared by the suites that need them."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from apps.core.queues import ALL_QUEUES
from tests.support.servers import BASE_DIR, start_celery_worker, test_database_env

if TYPE_CHECKING:
    from apps.llm.scripted import ScriptedProvider
    from emulators.drive.server import DriveEmulator
    from emulators.drive.state import DriveState
    from tests.support.llm_wire_stub import LLMWireStub


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A bytes parameter is named by its argument, not shown: generated files carry timestamps and
    random ids, and pytest-xdist's processes must collect the same test ids (pytest numbers them)."""
    return argname if isinstance(val, bytes | bytearray) else None


@pytest.fixture(scope="session", autouse=True)
def _fresh_redis_database() -> None:
    """The session's Redis database starts empty: event logs are keyed by folder and run ids, which
    a new test database hands out again, so an earlier session's events would replay in this one."""
    import redis
    from django.conf import settings

    redis.Redis.from_url(settings.REDIS_URL).flushdb()


@pytest.fixture(autouse=True)
def _site_language_after_each_test() -> Iterator[None]:
    """Django's LocaleMiddleware activates a request's language in the thread that served it and
    never deactivates it: a test client request in German would leave the next test German."""
    from django.utils import translation

    yield
    translation.deactivate()


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
        queues=ALL_QUEUES,
        log_path=BASE_DIR / "var" / f"test-worker-{os.getpid()}.log",
    ) as process:
        yield process


@pytest.fixture
def scripted() -> Iterator[ScriptedProvider]:
    """Every role (chat, router, agents) answers from this one script, in order."""
    from apps.llm.factory import use_provider_for_tests
    from apps.llm.scripted import ScriptedProvider

    with use_provider_for_tests(ScriptedProvider()) as provider:
        yield provider  # type: ignore[misc]


@pytest.fixture
def wire_stub() -> Iterator[LLMWireStub]:
    """A local server speaking the OpenAI and Anthropic wire formats, for the real SDKs."""
    from tests.support.llm_wire_stub import LLMWireStub

    with LLMWireStub() as stub:
        yield stub


@pytest.fixture
def emulator() -> Iterator[DriveEmulator]:
    """The Drive emulator on a loopback port."""
    from emulators.drive.server import DriveEmulator

    with DriveEmulator() as running:
        yield running


@pytest.fixture
def state(emulator: DriveEmulator) -> DriveState:
    return emulator.state

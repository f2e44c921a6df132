"""Fixtures a few suites opt into by importing them into their conftest."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.support.servers import BASE_DIR, RunningServer, start_uvicorn, test_database_env

if TYPE_CHECKING:
    from tests.support.llm_wire_stub import LLMWireStub


@pytest.fixture(autouse=True)
def fresh_throttle_counts() -> None:
    """Throttle counters live in the cache (Redis): each test starts with none spent."""
    from django.core.cache import cache

    cache.clear()


HEARTBEAT_SECONDS = 0.3


@pytest.fixture(scope="session")
def asgi_server(django_db_setup, django_db_blocker) -> Iterator[RunningServer]:
    """uvicorn serving config.asgi on the test database (tests using it must be transactional)."""
    env = test_database_env(
        EMBEDDING_PROVIDER="hash",
        LLM_PROVIDER="extractive",
        SSE_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS),
        THROTTLE_CHAT="1000/min",
    )
    log_path = BASE_DIR / "var" / f"test-asgi-{os.getpid()}.log"
    with start_uvicorn(env=env, log_path=log_path, log_level="warning") as server:
        yield server


@pytest.fixture(params=["openai", "anthropic"])
def sdk(request, settings, wire_stub) -> str:
    """The real openai / anthropic SDK, pointed at the wire stub (`wire_stub`, tests/conftest.py)."""
    wire_stub.configure(settings, request.param)
    settings.LLM_MAX_RETRIES = 0
    return request.param


@pytest.fixture
def worker_model(settings, monkeypatch) -> Iterator[LLMWireStub]:
    """The real OpenAI client, in this process and in a Celery worker, against the wire stub.

    Request it before `celery_worker_process`: the worker reads its provider from the environment
    when it starts."""
    from tests.support.llm_wire_stub import LLMWireStub

    with LLMWireStub() as stub:
        for name, value in stub.settings_for("openai").items():
            monkeypatch.setenv(name, str(value))
        settings.LLM_PROVIDER = "openai"
        yield stub

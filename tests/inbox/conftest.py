"""Inbox fixtures: providers (scripted, the wire stub behind the real SDKs), and a sample folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apps.llm.factory import use_provider_for_tests
from apps.llm.scripted import ScriptedProvider
from tests.chat.conftest import asgi_server  # noqa: F401  (the SSE tests stream through a real ASGI server)
from tests.organize.conftest import queued_suggestions, sample  # noqa: F401
from tests.support.llm_wire_stub import LLMWireStub


@pytest.fixture
def scripted() -> Iterator[ScriptedProvider]:
    """Every role (router and agents) answers from this one script, in order."""
    with use_provider_for_tests(ScriptedProvider()) as provider:
        yield provider  # type: ignore[misc]


@pytest.fixture
def wire_stub() -> Iterator[LLMWireStub]:
    with LLMWireStub() as stub:
        yield stub


@pytest.fixture(params=["openai", "anthropic"])
def sdk(request, settings, wire_stub) -> str:
    """The real openai / anthropic SDK, pointed at the wire stub."""
    for name, value in wire_stub.settings_for(request.param).items():
        setattr(settings, name, value)
    settings.LLM_MAX_RETRIES = 0
    return request.param


@pytest.fixture(autouse=True)
def _fresh_throttle_counts():
    from django.core.cache import cache

    cache.clear()

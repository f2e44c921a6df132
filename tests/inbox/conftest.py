"""Inbox fixtures: the real SDKs against the wire stub, and a sample folder.

`scripted` and `wire_stub` come from tests/conftest.py.
"""

from __future__ import annotations

import pytest

from tests.support.fixtures import (
    asgi_server,  # noqa: F401  (the SSE tests stream through a real ASGI server)
    fresh_throttle_counts,  # noqa: F401  (autouse)
)
from tests.support.sample_folder import queued_suggestions, sample  # noqa: F401  (fixtures)


@pytest.fixture(params=["openai", "anthropic"])
def sdk(request, settings, wire_stub) -> str:
    """The real openai / anthropic SDK, pointed at the wire stub."""
    for name, value in wire_stub.settings_for(request.param).items():
        setattr(settings, name, value)
    settings.LLM_MAX_RETRIES = 0
    return request.param

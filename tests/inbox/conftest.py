"""Inbox fixtures: the real SDKs against the wire stub, and a sample folder.

`scripted` and `wire_stub` come from tests/conftest.py.
"""

from __future__ import annotations

from tests.support.fixtures import (
    asgi_server,  # noqa: F401  (the SSE tests stream through a real ASGI server)
    fresh_throttle_counts,  # noqa: F401  (autouse)
    sdk,  # noqa: F401  (the real openai / anthropic SDK against the wire stub)
)
from tests.support.sample_folder import queued_suggestions, sample  # noqa: F401  (fixtures)

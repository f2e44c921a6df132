from __future__ import annotations

from collections.abc import Iterator

import pytest

from apps.llm.openai_compat import quirks_reset
from tests.support.llm_wire_stub import LLMWireStub


@pytest.fixture
def llm_wire_stub() -> Iterator[LLMWireStub]:
    with LLMWireStub() as stub:
        yield stub


@pytest.fixture(autouse=True)
def fresh_server_quirks() -> Iterator[None]:
    """What a stub server refused is remembered by its base URL: a later stub on the same port
    (ports are reused) must not inherit it."""
    quirks_reset()
    yield
    quirks_reset()

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.llm_wire_stub import LLMWireStub


@pytest.fixture
def llm_wire_stub() -> Iterator[LLMWireStub]:
    with LLMWireStub() as stub:
        yield stub

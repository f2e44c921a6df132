"""Streaming through the real SDKs against a stub that generates slowly: text arrives as written,
and a turn that calls tools forwards no text once its first tool call has started."""

from __future__ import annotations

import time
from typing import Any

import pytest

from apps.llm.anthropic_provider import AnthropicProvider
from apps.llm.base import LLMProvider, RetryPolicy
from apps.llm.openai_provider import OpenAIProvider
from apps.llm.types import Message, StopReason, TextDelta, ToolSpec
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall

SEARCH = ToolSpec(
    name="search_folder",
    description="Search the folder.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
WORDS = 40
CHUNK_DELAY = 0.025  # 40 words over about 1 s


@pytest.fixture(params=["openai", "anthropic"])
def provider(request: pytest.FixtureRequest, llm_wire_stub: LLMWireStub) -> LLMProvider:
    options: dict[str, Any] = {
        "model": "stub-model",
        "api_key": "test-key",
        "retry_policy": RetryPolicy(max_attempts=1),
    }
    if request.param == "openai":
        return OpenAIProvider(base_url=llm_wire_stub.openai_base_url, **options)
    return AnthropicProvider(base_url=llm_wire_stub.anthropic_base_url, **options)


def test_text_deltas_arrive_while_the_model_is_still_writing(provider: LLMProvider, llm_wire_stub: LLMWireStub):
    text = " ".join(f"word{index}" for index in range(WORDS))
    llm_wire_stub.reply_text(text, first_chunk_delay=0.2, chunk_delay=CHUNK_DELAY)
    arrivals: list[float] = []

    def on_text(delta: TextDelta) -> None:
        arrivals.append(time.monotonic())

    started = time.monotonic()
    response = provider.complete(messages=[Message.user("Write.")], tools=[SEARCH], on_text=on_text)
    ended = time.monotonic()

    assert response.text == text and response.stop_reason is StopReason.END_TURN
    assert len(arrivals) == WORDS
    # The first word reaches the caller about when it was written, long before the last one is.
    assert arrivals[0] - llm_wire_stub.text_sent[0] < 0.1
    assert arrivals[0] - started < 0.5 < ended - started
    assert arrivals[-1] - arrivals[0] > 0.5


def test_a_tool_call_turn_forwards_no_text(provider: LLMProvider, llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_tool_calls(StubToolCall("call_1", "search_folder", {"query": "w2"}), chunk_delay=0.01)
    deltas: list[TextDelta] = []

    response = provider.complete(messages=[Message.user("Find it.")], tools=[SEARCH], on_text=deltas.append)

    assert deltas == []
    assert [(call.name, dict(call.arguments)) for call in response.tool_calls] == [("search_folder", {"query": "w2"})]


def test_text_after_a_tool_call_starts_is_kept_as_reasoning_not_forwarded(
    provider: LLMProvider, llm_wire_stub: LLMWireStub
):
    """A preamble streams (it could have been the answer); nothing after the tool call begins does."""
    llm_wire_stub.reply_tool_calls(
        StubToolCall("call_1", "search_folder", {"query": "w2"}), text="Let me look.", trailing_text=" Searching."
    )
    deltas: list[TextDelta] = []

    response = provider.complete(messages=[Message.user("Find it.")], tools=[SEARCH], on_text=deltas.append)

    # The stub sends the preamble before the call, as both vendors do: it streams, the caller retracts it.
    assert "".join(delta.text for delta in deltas) == "Let me look."
    assert response.text == "Let me look. Searching." and response.stop_reason is StopReason.TOOL_USE

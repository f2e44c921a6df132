"""Behaviour both network providers share, checked through the real SDKs against the wire stub."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from apps.llm.anthropic_provider import AnthropicProvider
from apps.llm.base import (
    LLMBadResponseError,
    LLMError,
    LLMProvider,
    LLMRateLimitError,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
)
from apps.llm.openai_provider import OpenAIProvider
from apps.llm.types import Message, StopReason, TextDelta, ToolSpec
from tests.support.llm_wire_stub import LLMWireStub, StubReply, StubToolCall

FAST_RETRIES = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=1.0)
SEARCH = ToolSpec(
    name="search_folder",
    description="Search the folder.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)

ProviderFactory = Callable[..., LLMProvider]


@pytest.fixture(params=["openai", "anthropic"])
def make_provider(request: pytest.FixtureRequest, llm_wire_stub: LLMWireStub) -> ProviderFactory:
    def make(**options: Any) -> LLMProvider:
        options = {"model": "stub-model", "api_key": "test-key", "retry_policy": FAST_RETRIES, **options}
        if request.param == "openai":
            return OpenAIProvider(base_url=llm_wire_stub.openai_base_url, **options)
        return AnthropicProvider(base_url=llm_wire_stub.anthropic_base_url, **options)

    return make


def test_plain_answer_with_usage_and_model(make_provider: ProviderFactory, llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_text("Paris is the capital.", input_tokens=33, output_tokens=5, model="served-model")

    response = make_provider().complete(messages=[Message.user("Capital of France?")])

    assert response.text == "Paris is the capital."
    assert response.tool_calls == ()
    assert response.stop_reason is StopReason.END_TURN
    assert (response.usage.input_tokens, response.usage.output_tokens) == (33, 5)
    assert response.model == "served-model"


def test_streamed_text_deltas_arrive_in_order(make_provider: ProviderFactory, llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_text("Hello world", chunks=("Hel", "lo", " wor", "ld"), input_tokens=12, output_tokens=4)
    deltas: list[TextDelta] = []

    response = make_provider().complete(messages=[Message.user("hi")], on_text=deltas.append)

    assert [delta.text for delta in deltas] == ["Hel", "lo", " wor", "ld"]
    assert response.text == "Hello world"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 4)
    assert llm_wire_stub.requests[0].body["stream"] is True


@pytest.mark.parametrize("stream", [False, True])
def test_tool_calls_parsed(make_provider: ProviderFactory, llm_wire_stub: LLMWireStub, stream: bool):
    llm_wire_stub.reply_tool_calls(
        StubToolCall("call_a", "search_folder", {"query": "W-2 2024", "k": 5}),
        StubToolCall("call_b", "search_folder", {"query": "1099"}),
        text="Searching.",
    )
    deltas: list[TextDelta] = []

    response = make_provider().complete(
        messages=[Message.user("Find my tax forms")],
        tools=[SEARCH],
        on_text=deltas.append if stream else None,
    )

    assert response.stop_reason is StopReason.TOOL_USE
    assert [(call.id, call.name, dict(call.arguments)) for call in response.tool_calls] == [
        ("call_a", "search_folder", {"query": "W-2 2024", "k": 5}),
        ("call_b", "search_folder", {"query": "1099"}),
    ]
    assert response.text == "Searching."
    assert "".join(delta.text for delta in deltas) == ("Searching." if stream else "")


def test_truncation_reported_as_max_tokens(make_provider: ProviderFactory, llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_text("It was the best of", stop_reason="max_tokens")

    response = make_provider().complete(messages=[Message.user("Tell a story")], max_tokens=5)

    assert response.stop_reason is StopReason.MAX_TOKENS


def test_rate_limit_retried_after_server_retry_after(make_provider: ProviderFactory, llm_wire_stub: LLMWireStub):
    llm_wire_stub.fail(429, retry_after=0.3)
    llm_wire_stub.reply_text("Finally.")

    started = time.monotonic()
    response = make_provider().complete(messages=[Message.user("hi")])

    assert response.text == "Finally."
    assert len(llm_wire_stub.requests) == 2
    # The jittered backoff alone would wait about 0.01 s; waiting 0.3 s means retry-after was read.
    assert time.monotonic() - started >= 0.3


@pytest.mark.parametrize("status", [500, 503, 529])
def test_server_errors_retried_until_success(make_provider: ProviderFactory, llm_wire_stub: LLMWireStub, status: int):
    llm_wire_stub.fail(status, times=2)
    llm_wire_stub.reply_text("Recovered.")

    assert make_provider().complete(messages=[Message.user("hi")]).text == "Recovered."
    assert len(llm_wire_stub.requests) == 3


def test_persistent_server_error_surfaces_typed_after_bounded_attempts(
    make_provider: ProviderFactory, llm_wire_stub: LLMWireStub
):
    llm_wire_stub.fail(500, times=10)

    with pytest.raises(LLMUnavailableError) as raised:
        make_provider().complete(messages=[Message.user("hi")])

    assert raised.value.status_code == 500
    assert len(llm_wire_stub.requests) == FAST_RETRIES.max_attempts
    assert llm_wire_stub.pending == 10 - FAST_RETRIES.max_attempts


def test_persistent_rate_limit_surfaces_as_rate_limit_error(make_provider: ProviderFactory, llm_wire_stub: LLMWireStub):
    llm_wire_stub.fail(429, times=3)

    with pytest.raises(LLMRateLimitError):
        make_provider().complete(messages=[Message.user("hi")])
    assert len(llm_wire_stub.requests) == 3


def test_client_errors_are_not_retried(make_provider: ProviderFactory, llm_wire_stub: LLMWireStub):
    llm_wire_stub.fail(400)
    llm_wire_stub.reply_text("never reached")

    with pytest.raises(LLMError) as raised:
        make_provider().complete(messages=[Message.user("hi")])

    assert raised.value.status_code == 400
    assert not raised.value.retryable
    assert len(llm_wire_stub.requests) == 1


def test_timeout_raises_typed_error_without_retrying(make_provider: ProviderFactory, llm_wire_stub: LLMWireStub):
    llm_wire_stub.queue(StubReply(text="too late", delay=2.0))

    started = time.monotonic()
    with pytest.raises(LLMTimeoutError):
        make_provider(timeout_seconds=0.3).complete(messages=[Message.user("hi")])

    assert time.monotonic() - started < 1.5
    assert len(llm_wire_stub.requests) == 1


def test_stream_failing_after_output_is_not_retried(make_provider: ProviderFactory, llm_wire_stub: LLMWireStub):
    llm_wire_stub.cut_stream("Half an", " answer")
    llm_wire_stub.reply_text("A whole answer.")
    deltas: list[TextDelta] = []

    with pytest.raises(LLMError) as raised:
        make_provider().complete(messages=[Message.user("hi")], on_text=deltas.append)

    # A retry would show the user "Half an answer" followed by a second, different answer.
    assert [delta.text for delta in deltas] == ["Half an", " answer"]
    assert not raised.value.retryable
    assert llm_wire_stub.pending == 1


def test_unreachable_server_is_unavailable(make_provider: ProviderFactory, llm_wire_stub: LLMWireStub):
    provider = make_provider()
    llm_wire_stub.__exit__(None, None, None)  # nothing listens on that port any more

    with pytest.raises(LLMUnavailableError):
        provider.complete(messages=[Message.user("hi")])


def test_malformed_tool_arguments_are_a_bad_response():
    from apps.llm.openai_provider import parse_arguments

    assert parse_arguments("") == {}
    with pytest.raises(LLMBadResponseError):
        parse_arguments('{"query": "unterminated')
    with pytest.raises(LLMBadResponseError):
        parse_arguments('["not", "an", "object"]')

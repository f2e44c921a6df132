"""JSON answers through each provider's own mechanism, and Anthropic prompt caching, at the wire."""

from __future__ import annotations

import json

from apps.llm.anthropic_provider import JSON_TOOL, AnthropicProvider
from apps.llm.base import RetryPolicy
from apps.llm.openai_provider import OpenAIProvider
from apps.llm.types import Message, StopReason, ToolSpec
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall

SCHEMA = {"type": "object", "properties": {"intent": {"type": "string"}}, "required": ["intent"]}
SEARCH = ToolSpec(name="search_folder", description="Search.", parameters={"type": "object", "properties": {}})
ONCE = RetryPolicy(max_attempts=1)


def openai(stub: LLMWireStub, **options) -> OpenAIProvider:
    return OpenAIProvider(model="m", api_key="k", base_url=stub.openai_base_url, retry_policy=ONCE, **options)


def anthropic(stub: LLMWireStub, **options) -> AnthropicProvider:
    return AnthropicProvider(model="m", api_key="k", base_url=stub.anthropic_base_url, retry_policy=ONCE, **options)


def test_openai_asks_for_structured_output_and_compatible_servers_for_json_mode(llm_wire_stub):
    llm_wire_stub.reply_text('{"intent": "query"}')
    llm_wire_stub.reply_text('{"intent": "chat"}')

    native = openai(llm_wire_stub, structured_outputs=True).complete(messages=[Message.user("hi")], json_schema=SCHEMA)
    compatible = openai(llm_wire_stub).complete(messages=[Message.user("hi")], json_schema=SCHEMA)

    assert json.loads(native.text) == {"intent": "query"} and json.loads(compatible.text) == {"intent": "chat"}
    first, second = (sent.body for sent in llm_wire_stub.requests)
    assert first["response_format"] == {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}
    assert second["response_format"] == {"type": "json_object"}


def test_anthropic_forces_a_tool_whose_input_is_the_answer(llm_wire_stub):
    llm_wire_stub.reply_tool_calls(StubToolCall("toolu_1", JSON_TOOL, {"intent": "organize"}))

    response = anthropic(llm_wire_stub).complete(
        messages=[Message.user("sort")], system="Classify.", json_schema=SCHEMA
    )

    assert json.loads(response.text) == {"intent": "organize"}
    assert response.tool_calls == () and response.stop_reason is StopReason.END_TURN
    (sent,) = llm_wire_stub.requests
    assert sent.body["tool_choice"] == {"type": "tool", "name": JSON_TOOL}
    assert sent.body["tools"][0]["input_schema"] == SCHEMA


def test_anthropic_caches_the_system_prompt_and_the_tools(llm_wire_stub):
    llm_wire_stub.reply_text("ok")

    anthropic(llm_wire_stub).complete(messages=[Message.user("q")], system="You answer.", tools=[SEARCH, SEARCH])

    body = llm_wire_stub.requests[0].body
    assert body["system"] == [{"type": "text", "text": "You answer.", "cache_control": {"type": "ephemeral"}}]
    assert [tool.get("cache_control") for tool in body["tools"]] == [None, {"type": "ephemeral"}]


def test_cached_prefix_tokens_are_reported_apart_streaming_or_not():
    """The stub bills the breakpoints it receives; the usage we record splits input into the cache's share."""
    system = "You answer from the user's files. " * 200  # about 1,700 tokens at 4 characters each
    with LLMWireStub(count_tokens=lambda text: len(text) // 4, cache_min_tokens=1024) as stub:
        for _ in range(3):
            stub.reply_text("ok")
        provider = anthropic(stub)
        first = provider.complete(messages=[Message.user("q")], system=system, tools=[SEARCH])
        second = provider.complete(messages=[Message.user("q2")], system=system, tools=[SEARCH], on_text=lambda d: None)
        uncached = anthropic(stub, prompt_cache=False).complete(messages=[Message.user("q")], system=system)

    assert first.usage.cache_write_tokens > 1024 and first.usage.cache_read_tokens == 0
    # The system prompt and tools are read back; only the new question is written after them.
    assert 1024 < second.usage.cache_read_tokens < first.usage.cache_write_tokens
    assert 0 < second.usage.cache_write_tokens < 10
    assert second.usage.input_tokens == sum(stub.billed[1].values())  # input counts the cached share too
    assert second.usage.as_metrics()["cache_read"] == second.usage.cache_read_tokens
    assert "cache_control" not in json.dumps(stub.requests[2].body)
    assert uncached.usage.cache_read_tokens == uncached.usage.cache_write_tokens == 0
    assert uncached.usage.as_metrics().keys() == {"input", "output"}


def test_a_prefix_under_the_minimum_is_not_cached():
    with LLMWireStub(count_tokens=lambda text: len(text) // 4, cache_min_tokens=1024) as stub:
        stub.reply_text("ok")
        stub.reply_text("ok")
        provider = anthropic(stub)
        provider.complete(messages=[Message.user("q")], system="Short.", tools=[SEARCH])
        again = provider.complete(messages=[Message.user("q")], system="Short.", tools=[SEARCH])

    assert again.usage.cache_read_tokens == again.usage.cache_write_tokens == 0

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


def anthropic(stub: LLMWireStub) -> AnthropicProvider:
    return AnthropicProvider(model="m", api_key="k", base_url=stub.anthropic_base_url, retry_policy=ONCE)


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

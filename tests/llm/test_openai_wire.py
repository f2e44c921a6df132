"""What the OpenAI adapter puts on the wire, read back from the stub's recorded request bodies."""

from __future__ import annotations

import json

from apps.llm.openai_provider import OpenAIProvider
from apps.llm.types import Message, ToolCall, ToolSpec
from tests.support.llm_wire_stub import LLMWireStub

SEARCH = ToolSpec(
    name="search_folder",
    description="Search the folder.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


def _provider(stub: LLMWireStub) -> OpenAIProvider:
    return OpenAIProvider(model="gpt-test", api_key="sk-test", base_url=stub.openai_base_url, temperature=0.0)


def test_request_carries_model_system_tools_and_auth(llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_text("ok")

    _provider(llm_wire_stub).complete(
        messages=[Message.user("Where is my W-2?")],
        tools=[SEARCH],
        system="You answer from files.",
        max_tokens=77,
    )

    request = llm_wire_stub.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.body
    assert body["model"] == "gpt-test"
    assert body["messages"][0] == {"role": "system", "content": "You answer from files."}
    assert body["messages"][1] == {"role": "user", "content": "Where is my W-2?"}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "search_folder",
                "description": "Search the folder.",
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                },
            },
        }
    ]
    # Compatible servers behind a base URL get the long-standing parameter name.
    assert body["max_tokens"] == 77
    assert body["temperature"] == 0.0
    assert "stream" not in body


def test_tool_history_echoes_calls_and_pairs_results_by_id(llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_text("Your W-2 is in inbox.")
    history = [
        Message.user("Where is my W-2?"),
        Message.assistant(
            "Let me search.",
            tool_calls=(
                ToolCall(id="call_1", name="search_folder", arguments={"query": "W-2"}),
                ToolCall(id="call_2", name="search_folder", arguments={"query": "wage statement"}),
            ),
        ),
        Message.tool_result(tool_call_id="call_1", content='{"results": []}'),
        Message.tool_result(tool_call_id="call_2", content="search backend down", is_error=True),
    ]

    _provider(llm_wire_stub).complete(messages=history, tools=[SEARCH])

    messages = llm_wire_stub.requests[0].body["messages"]
    assistant = messages[1]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == "Let me search."
    assert [(call["id"], call["type"], call["function"]["name"]) for call in assistant["tool_calls"]] == [
        ("call_1", "function", "search_folder"),
        ("call_2", "function", "search_folder"),
    ]
    assert json.loads(assistant["tool_calls"][1]["function"]["arguments"]) == {"query": "wage statement"}
    assert messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": '{"results": []}'}
    assert messages[3] == {"role": "tool", "tool_call_id": "call_2", "content": "ERROR: search backend down"}


def test_assistant_turn_with_only_tool_calls_sends_null_content(llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_text("done")
    call = ToolCall(id="call_9", name="search_folder", arguments={"query": "x"})

    _provider(llm_wire_stub).complete(
        messages=[
            Message.user("q"),
            Message.assistant(tool_calls=(call,)),
            Message.tool_result(tool_call_id="call_9", content="{}"),
        ]
    )

    assert llm_wire_stub.requests[0].body["messages"][1]["content"] is None


def test_streaming_asks_for_usage(llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_text("streamed", input_tokens=40, output_tokens=2)

    response = _provider(llm_wire_stub).complete(messages=[Message.user("q")], on_text=lambda delta: None)

    assert llm_wire_stub.requests[0].body["stream_options"] == {"include_usage": True}
    assert response.usage.total_tokens == 42


def test_without_base_url_sends_max_completion_tokens():
    # Reasoning models on api.openai.com reject max_tokens; the request is built, not sent.
    provider = OpenAIProvider(model="gpt-test", api_key="sk-test")

    assert provider._max_tokens_key == "max_completion_tokens"

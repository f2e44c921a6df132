"""What the Anthropic adapter puts on the wire, read back from the stub's recorded request bodies."""

from __future__ import annotations

from typing import Any

from apps.llm.anthropic_provider import AnthropicProvider
from apps.llm.base import RetryPolicy
from apps.llm.types import Message, ToolCall, ToolSpec
from tests.support.llm_wire_stub import LLMWireStub

SEARCH = ToolSpec(
    name="search_folder",
    description="Search the folder.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


def _provider(stub: LLMWireStub, **options: Any) -> AnthropicProvider:
    return AnthropicProvider(
        model="claude-test", api_key="ak-test", base_url=stub.anthropic_base_url, max_tokens=300, **options
    )


def test_request_carries_model_tools_auth_and_top_level_system(llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_text("ok")

    _provider(llm_wire_stub).complete(
        messages=[Message.system("Be brief."), Message.user("Where is my W-2?")],
        tools=[SEARCH],
        system="You answer from files.",
    )

    request = llm_wire_stub.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "ak-test"
    assert "anthropic-version" in request.headers
    body = request.body
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 300
    # System text is a parameter, never a turn: the parameter and system messages are joined.
    cache = {"type": "ephemeral"}  # prompt caching: the same system prompt and tools every agent turn
    assert body["system"] == [{"type": "text", "text": "You answer from files.\n\nBe brief.", "cache_control": cache}]
    # With tools (a loop that grows by a turn a call), the conversation's end is a breakpoint too.
    question = {"type": "text", "text": "Where is my W-2?", "cache_control": cache}
    assert body["messages"] == [{"role": "user", "content": [question]}]
    assert body["tools"] == [
        {
            "name": "search_folder",
            "description": "Search the folder.",
            "input_schema": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
            "cache_control": cache,
        }
    ]


def test_no_system_parameter_without_system_text(llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_text("ok")

    _provider(llm_wire_stub).complete(messages=[Message.user("hi")])

    assert "system" not in llm_wire_stub.requests[0].body


def test_tool_results_go_back_as_one_user_message_paired_by_id(llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_text("Your W-2 is in inbox.")
    history = [
        Message.user("Where is my W-2?"),
        Message.assistant(
            tool_calls=(
                ToolCall(id="toolu_1", name="search_folder", arguments={"query": "W-2"}),
                ToolCall(id="toolu_2", name="search_folder", arguments={"query": "wage statement"}),
            ),
        ),
        Message.tool_result(tool_call_id="toolu_1", content='{"results": []}'),
        Message.tool_result(tool_call_id="toolu_2", content="search backend down", is_error=True),
    ]

    _provider(llm_wire_stub).complete(messages=history, tools=[SEARCH])

    messages = llm_wire_stub.requests[0].body["messages"]
    assert [message["role"] for message in messages] == ["user", "assistant", "user"]
    # An assistant turn with only tool calls must not carry an empty text block.
    assert messages[1]["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "search_folder", "input": {"query": "W-2"}},
        {"type": "tool_use", "id": "toolu_2", "name": "search_folder", "input": {"query": "wage statement"}},
    ]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"results": []}', "is_error": False},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": "search backend down",
            "is_error": True,
            "cache_control": {"type": "ephemeral"},
        },
    ]


def test_consecutive_user_turns_merge_to_keep_alternation(llm_wire_stub: LLMWireStub):
    llm_wire_stub.reply_text("ok")

    _provider(llm_wire_stub).complete(
        messages=[
            Message.user("First question"),
            Message.assistant("First answer"),
            Message.user("Context: the 2024 folder."),
            Message.user("Second question"),
        ]
    )

    messages = llm_wire_stub.requests[0].body["messages"]
    assert [message["role"] for message in messages] == ["user", "assistant", "user"]
    assert [block["text"] for block in messages[2]["content"]] == [
        "Context: the 2024 folder.",
        "Second question",
    ]


def test_stream_error_before_any_text_is_retried(llm_wire_stub: LLMWireStub):
    llm_wire_stub.cut_stream(error_type="overloaded_error")
    llm_wire_stub.reply_text("After the overload.")
    deltas: list[str] = []

    response = _provider(llm_wire_stub, retry_policy=RetryPolicy(base_delay=0.01)).complete(
        messages=[Message.user("hi")], on_text=lambda delta: deltas.append(delta.text)
    )

    assert response.text == "After the overload."
    assert "".join(deltas) == "After the overload."
    assert len(llm_wire_stub.requests) == 2

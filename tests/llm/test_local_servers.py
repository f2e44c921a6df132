"""Local model servers through the real openai SDK: the wire stub speaks Ollama, llama-server and
vLLM (tests/support/llm_wire_dialects.py), and each of their differences from OpenAI is met."""

from __future__ import annotations

import json
import math

import pytest

from apps.llm.base import LLMError, RetryPolicy
from apps.llm.openai_provider import OpenAIProvider
from apps.llm.types import Message, StopReason, TextDelta, ToolSpec, Usage
from tests.support.llm_wire_dialects import Dialect, llamacpp, ollama, vllm
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall

SEARCH = ToolSpec(
    name="search_folder",
    description="Search the folder.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
SCHEMA = {"type": "object", "properties": {"intent": {"type": "string"}}, "required": ["intent"]}


def local(stub: LLMWireStub) -> OpenAIProvider:
    # One attempt: getting past a refused field must not lean on the retry budget.
    return OpenAIProvider(
        model="llama3.1:8b", api_key="unused", base_url=stub.openai_base_url, retry_policy=RetryPolicy(max_attempts=1)
    )


def joined(deltas: list[TextDelta]) -> str:
    return "".join(delta.text for delta in deltas)


# -- stream_options and usage ----------------------------------------------------------------------


def test_refused_stream_options_are_sent_again_without_and_left_out_from_then_on():
    deltas: list[TextDelta] = []
    with LLMWireStub(dialect=vllm()) as stub:
        stub.reply_text("First answer.")
        stub.reply_text("Second answer.")
        first = local(stub).complete(messages=[Message.user("q")], on_text=deltas.append)
        second = local(stub).complete(messages=[Message.user("q")], on_text=deltas.append)

    assert (first.text, second.text) == ("First answer.", "Second answer.")
    assert joined(deltas) == "First answer.Second answer."
    refused, retried, later = (sent.body for sent in stub.requests)
    assert refused["stream_options"] == {"include_usage": True}
    assert "stream_options" not in retried and "stream_options" not in later
    assert retried["stream"] is True  # still streamed


def test_a_refused_field_is_remembered_for_that_server_only():
    with LLMWireStub(dialect=vllm()) as refusing, LLMWireStub() as other:
        refusing.reply_text("ok")
        other.reply_text("ok")
        local(refusing).complete(messages=[Message.user("q")], on_text=lambda delta: None)
        local(other).complete(messages=[Message.user("q")], on_text=lambda delta: None)

    assert other.requests[0].body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("dialect", [ollama(), vllm()], ids=["ollama-before-0.5.2", "vllm-without-stream-options"])
def test_a_stream_without_usage_is_estimated_and_marked(dialect: Dialect):
    with LLMWireStub(dialect=dialect) as stub:
        stub.reply_text("Paris is the capital of France.", model="llama3.1:8b")
        response = local(stub).complete(
            messages=[Message.user("Capital of France?")], system="Answer briefly.", on_text=lambda delta: None
        )

    # About four characters a token: the system prompt and question in, the answer out.
    sent = len("Answer briefly.") + len("Capital of France?")
    assert response.usage == Usage(input_tokens=math.ceil(sent / 4), output_tokens=8, estimated=True)


def test_usage_on_the_finish_chunk_is_counted_as_reported():
    """llama-server before #15444 puts usage on the chunk that finishes, asked or not."""
    with LLMWireStub(dialect=llamacpp()) as stub:
        stub.reply_text("It was 12,300 dollars.", input_tokens=120, output_tokens=9)
        response = local(stub).complete(messages=[Message.user("q")], on_text=lambda delta: None)

    assert response.usage == Usage(input_tokens=120, output_tokens=9)


def test_a_refusal_that_names_no_field_to_leave_out_surfaces_once():
    with LLMWireStub(dialect=llamacpp()) as stub:
        stub.fail(400)
        with pytest.raises(LLMError) as raised:
            local(stub).complete(messages=[Message.user("q")], tools=[SEARCH], on_text=lambda delta: None)

    assert raised.value.status_code == 400 and len(stub.requests) == 1


# -- tools ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dialect",
    [
        ollama(tools=False),
        llamacpp(jinja=False),
        vllm(tool_parser=False, auto_tool_choice_refused=True, extra_fields=True),
    ],
    ids=["ollama-model-without-tools", "llama-server-without-jinja", "vllm-without-tool-parser"],
)
def test_refused_tools_are_described_in_the_prompt_and_calls_read_from_the_text(dialect: Dialect):
    deltas: list[TextDelta] = []
    with LLMWireStub(dialect=dialect) as stub:
        stub.reply_tool_calls(StubToolCall("call_1", "search_folder", {"query": "W-2 2024"}))
        stub.reply_text("It was 12,300 dollars.")
        llm = local(stub)
        asked = llm.complete(
            messages=[Message.user("Find my W-2")],
            tools=[SEARCH],
            system="You answer from files.",
            on_text=deltas.append,
        )
        (call,) = asked.tool_calls
        history = [
            Message.user("Find my W-2"),
            asked.as_message(),
            Message.tool_result(tool_call_id=call.id, content='{"documents": []}'),
        ]
        answer = llm.complete(messages=history, tools=[SEARCH], system="You answer from files.", on_text=deltas.append)

    assert (call.name, dict(call.arguments), asked.stop_reason) == (
        "search_folder",
        {"query": "W-2 2024"},
        StopReason.TOOL_USE,
    )
    assert answer.text == joined(deltas) == "It was 12,300 dollars."  # the call itself never showed
    refused, retried, next_turn = (sent.body for sent in stub.requests)
    assert refused["tools"] and "tools" not in retried and "tools" not in next_turn
    system = retried["messages"][0]["content"]
    assert system.startswith("You answer from files.") and "<tool_call>" in system and '"search_folder"' in system
    # The call and its result go back as text, in turns that alternate as chat templates want.
    roles = [message["role"] for message in next_turn["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert json.loads(next_turn["messages"][2]["content"].removeprefix("<tool_call>").removesuffix("</tool_call>")) == {
        "name": "search_folder",
        "arguments": {"query": "W-2 2024"},
    }
    assert next_turn["messages"][3]["content"] == (
        '<tool_response>{"name": "search_folder", "content": "{\\"documents\\": []}"}</tool_response>'
    )


def test_tools_refused_with_streaming_go_unstreamed_and_the_answer_still_arrives():
    deltas: list[TextDelta] = []
    with LLMWireStub(dialect=llamacpp(stream_tools=False)) as stub:
        stub.reply_text("It was 12,300 dollars.")
        stub.reply_text("Again 12,300.")
        stub.reply_text("Without tools.")
        llm = local(stub)
        first = llm.complete(messages=[Message.user("q")], tools=[SEARCH], on_text=deltas.append)
        llm.complete(messages=[Message.user("q")], tools=[SEARCH], on_text=lambda delta: None)
        llm.complete(messages=[Message.user("q")], on_text=lambda delta: None)

    assert first.text == joined(deltas) == "It was 12,300 dollars." and len(deltas) == 4  # word by word
    refused, retried, later, plain = (sent.body for sent in stub.requests)
    assert refused["stream"] is True
    assert "stream" not in retried and "stream" not in later and retried["tools"] == later["tools"]
    assert plain["stream"] is True  # a turn without tools still streams


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize(
    ("tool_text", "preamble"),
    [("hermes", "Let me look."), ("hermes", ""), ("json", "")],
    ids=["hermes-after-text", "hermes", "llama-json"],
)
def test_calls_the_model_wrote_as_text_are_calls(stream: bool, tool_text, preamble: str):
    deltas: list[TextDelta] = []
    with LLMWireStub(dialect=vllm(tool_parser=False, tool_text=tool_text, extra_fields=True)) as stub:
        stub.reply_tool_calls(StubToolCall("call_1", "search_folder", {"query": "W-2"}), text=preamble)
        response = local(stub).complete(
            messages=[Message.user("Find it")], tools=[SEARCH], on_text=deltas.append if stream else None
        )

    assert len(stub.requests) == 1 and stub.requests[0].body["tools"]  # the server took the tools field
    assert [(call.name, dict(call.arguments)) for call in response.tool_calls] == [("search_folder", {"query": "W-2"})]
    assert response.stop_reason is StopReason.TOOL_USE and response.text == preamble
    # A preamble streams as a native one does (the agent takes it back); the call never shows.
    assert joined(deltas).rstrip() == (preamble if stream else "")


@pytest.mark.parametrize(
    "text",
    [
        '{"answer": 42, "unit": "dollars"}',
        '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>',
        "Bold is <b>this</b>, and a lone < stays.",
    ],
    ids=["json-answer", "unknown-tool", "angle-brackets"],
)
def test_text_that_is_no_call_reaches_the_caller_whole(text: str):
    deltas: list[TextDelta] = []
    with LLMWireStub(dialect=vllm(tool_parser=False, extra_fields=True)) as stub:
        stub.reply_text(text)
        response = local(stub).complete(messages=[Message.user("q")], tools=[SEARCH], on_text=deltas.append)

    assert response.tool_calls == () and response.text == joined(deltas) == text


@pytest.mark.parametrize("index", ["zero", "missing"], ids=["index-0-for-each", "no-index"])
def test_ollamas_whole_tool_calls_stay_apart(index: str):
    with LLMWireStub(dialect=ollama(tool_call_index=index)) as stub:
        stub.reply_tool_calls(
            StubToolCall("call_a", "search_folder", {"query": "W-2"}),
            StubToolCall("call_b", "search_folder", {"query": "1099"}),
        )
        response = local(stub).complete(messages=[Message.user("q")], tools=[SEARCH], on_text=lambda delta: None)

    assert [(call.id, dict(call.arguments)) for call in response.tool_calls] == [
        ("call_a", {"query": "W-2"}),
        ("call_b", {"query": "1099"}),
    ]


# -- JSON mode --------------------------------------------------------------------------------------


def test_refused_json_mode_becomes_a_prompt_and_the_first_object_the_answer():
    with LLMWireStub(dialect=vllm(outlines_json=True, extra_fields=True)) as stub:
        stub.reply_text('Sure! Here it is: {"intent": "query", "note": "a {brace} inside"} Hope that helps.')
        stub.reply_text('{"intent": "chat"}')
        llm = local(stub)
        first = llm.complete(messages=[Message.user("where is my W-2")], system="Classify.", json_schema=SCHEMA)
        second = llm.complete(messages=[Message.user("hello")], system="Classify.", json_schema=SCHEMA)

    assert json.loads(first.text) == {"intent": "query", "note": "a {brace} inside"}
    assert json.loads(second.text) == {"intent": "chat"}
    refused, retried, later = (sent.body for sent in stub.requests)
    assert refused["response_format"] == {"type": "json_object"}
    assert "response_format" not in retried and "response_format" not in later
    system = retried["messages"][0]["content"]
    assert system.startswith("Classify.") and json.dumps(SCHEMA) in system


def test_json_mode_accepted_but_not_kept_to_still_gives_the_object():
    """llama-server may answer prose around the object (ggml-org/llama.cpp#24096)."""
    with LLMWireStub(dialect=llamacpp()) as stub:
        stub.reply_text('The intent is clear.\n```json\n{"intent": "organize"}\n```')
        response = local(stub).complete(messages=[Message.user("sort my inbox")], json_schema=SCHEMA)

    assert response.text == '{"intent": "organize"}'
    assert stub.requests[0].body["response_format"] == {"type": "json_object"}

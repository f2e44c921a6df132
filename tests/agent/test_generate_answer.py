"""Seed 001's generate_answer ends the research: asked through the chat API, answered by the real
openai and anthropic SDKs against the wire stub."""

from __future__ import annotations

import pytest

from apps.chat.agent.prompts import FINAL_ANSWER_SYSTEM_PROMPT
from apps.chat.models import AgentRun, Message
from tests.support.agent_runs import QUESTION, first_search_number, tool_names
from tests.support.chat_api import ask_streamed, of_type
from tests.support.llm_wire_stub import OPENAI_PATH, StubToolCall

pytestmark = pytest.mark.django_db(transaction=True)

QUERY = "federal income tax withheld 2024"
WITHHELD = "withheld on the 2024"


def generate_answer_schema(sent) -> dict:
    for tool in sent.body["tools"]:
        if sent.path == OPENAI_PATH and tool["function"]["name"] == "generate_answer":
            return tool["function"]["parameters"]
        if sent.path != OPENAI_PATH and tool["name"] == "generate_answer":
            return tool["input_schema"]
    raise AssertionError("generate_answer was not offered")


def system_of(sent) -> str:
    if sent.path == OPENAI_PATH:
        return sent.body["messages"][0]["content"]
    return "".join(block["text"] for block in sent.body["system"])


def finished(run_id: str) -> tuple[AgentRun, Message]:
    run = AgentRun.objects.get(pk=run_id)
    return run, Message.objects.get(pk=run.answer_id)


def test_an_answer_given_to_generate_answer_ends_the_loop_with_it(library, sdk, wire_stub, auth_client):
    n = first_search_number(library.folder, QUERY, WITHHELD)
    answer = f"Federal income tax withheld on the 2024 W-2 was 12,300 dollars [{n}]."
    wire_stub.reply_tool_calls(StubToolCall("call_s", "search_folder", {"query": QUERY}))
    wire_stub.reply_tool_calls(StubToolCall("call_a", "generate_answer", {"answer": answer}))

    run_id, events = ask_streamed(auth_client, library.folder, message=QUESTION, agent_mode=True)

    run, message = finished(run_id)
    assert run.status == "completed" and run.fallback_reason == "", run.error
    assert len(wire_stub.requests) == 2  # no model turn after the call, no citation retry
    assert {"search_folder", "generate_answer"} <= tool_names(wire_stub.requests[0].body)
    assert set(generate_answer_schema(wire_stub.requests[0])["properties"]) == {"answer", "citations"}
    assert message.content["text"] == answer
    w2 = library.file("W2_2024.pdf")
    assert [(c["n"], c["file_id"], c["location"]) for c in message.content["citations"]] == [(n, w2.pk, "page 2")]
    assert "".join(delta["text"] for delta in of_type(events, "text_delta")) == answer  # streamed as written
    assert [(r["tool_name"], r["status"]) for r in of_type(events, "tool_result")] == [
        ("search_folder", "complete"),
        ("generate_answer", "complete"),
    ]
    assert run.metrics["finish"] == "answered" and run.metrics["forced_final_answer"] is False
    assert [m["id"] for m in of_type(events, "message")] == [message.pk]


def test_generate_answer_without_arguments_has_the_answer_written_from_what_was_gathered(
    library, sdk, wire_stub, auth_client
):
    n = first_search_number(library.folder, QUERY, WITHHELD)
    wire_stub.reply_tool_calls(StubToolCall("call_s", "search_folder", {"query": QUERY}))
    wire_stub.reply_tool_calls(StubToolCall("call_a", "generate_answer", {}))  # the seed's schema: no input
    wire_stub.reply_text(f"It was 12,300 dollars [{n}].")

    run_id, events = ask_streamed(auth_client, library.folder, message=QUESTION, agent_mode=True)

    run, message = finished(run_id)
    assert run.status == "completed", run.error
    final = wire_stub.requests[2]
    assert len(wire_stub.requests) == 3 and "tools" not in final.body
    assert FINAL_ANSWER_SYSTEM_PROMPT in system_of(final)
    assert "Federal income tax withheld on the 2024 W-2 was 12,300 dollars." in str(final.body["messages"])
    assert message.content["text"] == f"It was 12,300 dollars [{n}]."  # no limit's note: the model asked
    assert [c["n"] for c in message.content["citations"]] == [n]
    assert run.metrics["finish"] == "answer_requested" and run.metrics["forced_final_answer"] is False
    generating = [s for s in of_type(events, "status") if s["phase"] == "generating" and "forced" in s]
    assert [s["forced"] for s in generating] == [False]


def test_the_passages_generate_answer_lists_are_cited_without_asking_again(library, sdk, wire_stub, auth_client):
    n = first_search_number(library.folder, QUERY, WITHHELD)
    wire_stub.reply_tool_calls(StubToolCall("call_s", "search_folder", {"query": QUERY}))
    wire_stub.reply_tool_calls(
        StubToolCall("call_a", "generate_answer", {"answer": "It was 12,300 dollars.", "citations": [n, 999]})
    )

    run_id, _ = ask_streamed(auth_client, library.folder, message=QUESTION, agent_mode=True)

    run, message = finished(run_id)
    assert run.status == "completed", run.error
    assert len(wire_stub.requests) == 2  # cited through the list: no "cite your sources" retry
    assert message.content["text"] == "It was 12,300 dollars."
    assert [(c["n"], c["path"]) for c in message.content["citations"]] == [
        (n, "finance/W2_2024.pdf")
    ]  # 999: never given


def test_a_refused_generate_answer_call_lets_the_model_go_on(library, sdk, wire_stub, auth_client):
    n = first_search_number(library.folder, QUERY, WITHHELD)
    wire_stub.reply_tool_calls(StubToolCall("call_s", "search_folder", {"query": QUERY}))
    wire_stub.reply_tool_calls(StubToolCall("call_a", "generate_answer", {"answer": "Shown first.", "sources": [n]}))
    wire_stub.reply_text(f"It was 12,300 dollars [{n}].")

    run_id, events = ask_streamed(auth_client, library.folder, message=QUESTION, agent_mode=True)

    run, message = finished(run_id)
    assert run.status == "completed", run.error
    assert len(wire_stub.requests) == 3  # the invalid call's error went back to the model
    assert message.content["text"] == f"It was 12,300 dollars [{n}]."
    assert any(event.type == "text_reset" for event in events)  # the refused call's streamed text was taken back

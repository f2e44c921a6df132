"""The main agent flows through the real openai and anthropic SDKs, against the local wire stub."""

from __future__ import annotations

import itertools
import json

import pytest

from apps.chat.agent.prompts import REWRITE_SYSTEM_PROMPT
from apps.chat.models import Message
from tests.support.agent_runs import QUESTION, ask, first_search_number, tool_names, tool_results
from tests.support.llm_wire_stub import OPENAI_PATH, StubToolCall

pytestmark = pytest.mark.django_db(transaction=True)


def last_tool_result(sent) -> tuple[str, dict, bool]:
    """(call id, payload, is_error) of the last tool result in a request, in either wire format."""
    if sent.path == OPENAI_PATH:
        message = sent.body["messages"][-1]
        assert message["role"] == "tool"
        return message["tool_call_id"], json.loads(message["content"].removeprefix("ERROR: ")), False
    (block,) = [b for b in sent.body["messages"][-1]["content"] if b["type"] == "tool_result"]
    return block["tool_use_id"], json.loads(block["content"]), block["is_error"]


def assistant_call_ids(sent) -> list[str]:
    message = sent.body["messages"][-2]
    assert message["role"] == "assistant"
    if sent.path == OPENAI_PATH:
        return [call["id"] for call in message["tool_calls"]]
    return [block["id"] for block in message["content"] if block["type"] == "tool_use"]


def test_simple_flow_through_the_sdk(library, sdk, wire_stub):
    w2 = library.file("W2_2024.pdf")
    n = first_search_number(library.folder, "federal income tax withheld 2024", "withheld on the 2024")
    wire_stub.reply_tool_calls(StubToolCall("call_s1", "search_folder", {"query": "federal income tax withheld 2024"}))
    wire_stub.reply_tool_calls(StubToolCall("call_r1", "read_document", {"doc_id": w2.pk}))
    wire_stub.reply_text(f"Federal income tax withheld was 12,300 dollars [{n}].", input_tokens=400, output_tokens=15)

    run, events = ask(library.folder, QUESTION)

    assert run.status == "completed" and run.fallback_reason == "", run.error
    first, second, third = wire_stub.requests
    assert all(sent.body.get("stream") is True for sent in (first, second, third))  # any turn may answer
    assert {"search_folder", "rewrite_query", "read_document", "get_stats"} <= tool_names(first.body)
    call_id, payload, is_error = last_tool_result(second)
    assert call_id == "call_s1" and assistant_call_ids(second) == ["call_s1"] and not is_error
    chunks = [chunk for document in payload["documents"] for chunk in document["chunks"]]
    assert chunks[n - 1]["text"] == "Federal income tax withheld on the 2024 W-2 was 12,300 dollars."
    call_id, payload, _ = last_tool_result(third)
    assert call_id == "call_r1" and payload["path"] == "finance/W2_2024.pdf"
    assert [b.get("seen_before") for b in payload["blocks"]] == [True, True]  # both chunks came with the search
    answer = Message.objects.get(pk=run.answer_id)
    assert [(c["n"], c["file_id"], c["location"]) for c in answer.content["citations"]] == [(n, w2.pk, "page 2")]
    assert answer.metadata["model"] == "stub-model" and answer.metadata["tokens"] == {"input": 442, "output": 33}
    assert [r["tool_name"] for r in tool_results(events)] == ["search_folder", "read_document"]
    assert "".join(e.data["text"] for e in events if e.type == "text_delta") == answer.content["text"]


def test_refinement_flow_through_the_sdk(library, sdk, wire_stub, settings):
    settings.AGENT_MAX_ITERATIONS = 4  # search, rewrite, search, answer
    n = first_search_number(library.folder, "federal income tax withheld", "withheld on the 2024")
    wire_stub.reply_tool_calls(
        StubToolCall("call_a", "search_folder", {"query": "money my boss kept back", "mode": "keyword"})
    )
    wire_stub.reply_tool_calls(
        StubToolCall("call_b", "rewrite_query", {"original_query": "money my boss kept back", "feedback": "no results"})
    )
    wire_stub.reply_text("federal income tax withheld")  # the router model's rewrite
    wire_stub.reply_tool_calls(StubToolCall("call_c", "search_folder", {"query": "federal income tax withheld"}))
    wire_stub.reply_text(f"It was 12,300 dollars [{n}].")

    run, _ = ask(library.folder, QUESTION)

    assert run.status == "completed" and run.fallback_reason == "", run.error
    _, empty, _ = last_tool_result(wire_stub.requests[1])
    assert empty["documents"] == []
    rewrite = wire_stub.requests[2].body
    assert "tools" not in rewrite
    system = rewrite["messages"][0]["content"] if "system" not in rewrite else str(rewrite["system"])
    assert REWRITE_SYSTEM_PROMPT in system
    call_id, rewritten, _ = last_tool_result(wire_stub.requests[3])
    assert call_id == "call_b" and rewritten["rewritten_query"] == "federal income tax withheld"
    assert rewritten["method"] == "model"
    assert [(c["name"], c["status"]) for c in run.tool_calls] == [
        ("search_folder", "complete"),
        ("rewrite_query", "complete"),
        ("search_folder", "complete"),
    ]
    citations = Message.objects.get(pk=run.answer_id).content["citations"]
    assert [(c["n"], c["path"], c["location"]) for c in citations] == [(n, "finance/W2_2024.pdf", "page 2")]
    assert run.metrics["llm_calls"] == 5


def test_a_provider_failure_answers_offline_through_the_sdk(library, sdk, wire_stub):
    wire_stub.fail(500)

    run, events = ask(library.folder, QUESTION)

    assert run.status == "completed" and run.fallback_reason == "The model service reported an error on its side."
    (sent,) = wire_stub.requests  # the failing provider is not asked again in the run
    assert "tools" in sent.body
    fallback = next(e.data for e in events if e.type == "status" and e.data["phase"] == "fallback")
    assert fallback["reason"] == run.fallback_reason and fallback["message"].startswith("Falling back")
    assert Message.objects.get(pk=run.answer_id).metadata["model"] == "extractive"


def test_prompt_cache_tokens_reach_the_run_metrics_through_the_anthropic_sdk(library, settings, wire_stub):
    """The stub bills the cache_control breakpoints it receives; the run records the cache's share."""
    wire_stub.configure(settings, "anthropic")
    wire_stub.count_tokens = lambda text: len(text) // 4
    wire_stub.reply_tool_calls(StubToolCall("call_s1", "search_folder", {"query": "federal income tax withheld"}))
    wire_stub.reply_tool_calls(StubToolCall("call_s2", "search_folder", {"query": "W-2 box 2"}))
    wire_stub.reply_text("Federal income tax withheld was 12,300 dollars.")

    run, _ = ask(library.folder, QUESTION)

    assert run.status == "completed" and run.fallback_reason == "", run.error
    billed = wire_stub.billed
    assert billed[0]["cache_creation_input_tokens"] > 1024 and billed[0]["cache_read_input_tokens"] == 0
    # Each turn reads all the previous turn sent (prompt, tools and conversation) and writes only what is new.
    for before, usage in itertools.pairwise(billed):
        sent_before = before["cache_read_input_tokens"] + before["cache_creation_input_tokens"]
        assert usage["cache_read_input_tokens"] == sent_before and usage["input_tokens"] == 0
    tokens = run.metrics["tokens"]
    assert tokens["cache_write"] == sum(usage["cache_creation_input_tokens"] for usage in billed)
    assert tokens["cache_read"] == sum(usage["cache_read_input_tokens"] for usage in billed)
    assert tokens["input"] == sum(sum(usage.values()) for usage in billed)

"""Agent mode through `run_execute` with the scripted provider: the flows of a run (test_loop_limits.py: its limits)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from apps.chat import services
from apps.chat.agent.prompts import AGENT_SYSTEM_PROMPT
from apps.chat.agent.tools import documents as documents_module
from apps.chat.models import RunStatus
from apps.chat.standard import chat_run_standard
from apps.library.models import Chunk
from apps.llm.factory import use_provider_for_tests
from apps.llm.scripted import ScriptedProvider, text_response, tool_call_response
from apps.llm.types import LLMRequest, LLMResponse, Role
from tests.support.agent_requests import number_of, tool_payloads
from tests.support.agent_runs import QUESTION, WITHHELD_2024, answer_message, ask, cite, tool_results

pytestmark = pytest.mark.django_db(transaction=True)


def test_simple_search_read_answer(library, scripted):
    w2 = library.file("W2_2024.pdf")
    scripted.push(
        tool_call_response(("search_folder", {"query": "federal income tax withheld 2024"}), text="Searching first."),
        tool_call_response(("read_document", {"doc_id": w2.pk})),
        cite(WITHHELD_2024, input_tokens=300, output_tokens=12),
    )

    run, events = ask(library.folder, QUESTION)

    assert run.status == RunStatus.COMPLETED and run.mode == "agent" and run.fallback_reason == ""
    answer = answer_message(run)
    (citation,) = answer.content["citations"]
    assert (citation["file_id"], citation["path"], citation["location"]) == (w2.pk, "finance/W2_2024.pdf", "page 2")
    assert "12,300" in citation["snippet"] and citation["chunk_id"]
    assert "".join(e.data["text"] for e in events if e.type == "text_delta") == answer.content["text"]

    assert run.iterations == 3
    assert [(c["name"], c["status"], c["iteration"]) for c in run.tool_calls] == [
        ("search_folder", "complete", 1),
        ("read_document", "complete", 2),
    ]
    assert run.tool_calls[1]["input"] == {"doc_id": w2.pk}
    assert all(isinstance(c["duration_ms"], int) and c["output"] for c in run.tool_calls)
    metrics = run.metrics
    assert (metrics["iterations"], metrics["searches"], metrics["reads"], metrics["llm_calls"]) == (3, 1, 1, 3)
    assert metrics["finish"] == "answered" and metrics["fallback_used"] is False
    assert metrics["forced_final_answer"] is False
    assert metrics["tokens"] == {"input": 300, "output": 12} and metrics["duration_ms"] >= 0
    assert metrics["search_trace"][0].startswith('search_folder "federal income tax withheld 2024" (hybrid): ')

    # Every step is an event, in order, before the answer.
    steps = [(e.type, e.data.get("phase") or e.data.get("tool_name")) for e in events if e.type != "text_delta"]
    assert steps == [
        ("status", "planning"),
        ("status", "searching"),
        ("tool_call", "search_folder"),
        ("tool_result", "search_folder"),
        ("status", "reading_file"),
        ("tool_call", "read_document"),
        ("tool_result", "read_document"),
        ("status", "generating"),
        ("message", None),
        ("done", None),
    ]
    call_event = next(e.data for e in events if e.type == "tool_call")
    assert call_event["status"] == "running" and call_event["iteration"] == 1
    assert call_event["tool_input"] == {"query": "federal income tax withheld 2024"}
    assert call_event["reasoning"] == "Searching first."
    read_result = tool_results(events)[1]
    assert read_result["status"] == "complete" and read_result["iteration"] == 2
    assert read_result["tool_output"].startswith("finance/W2_2024.pdf: 2 of 2 blocks")
    assert isinstance(read_result["duration_ms"], int)


def test_each_tool_result_keeps_its_structured_output_beside_the_summary(library, scripted):
    w2 = library.file("W2_2024.pdf")
    scripted.push(
        tool_call_response(("search_folder", {"query": "federal income tax withheld 2024", "k": 6})),
        tool_call_response(("read_document", {"doc_id": w2.pk})),
        cite(WITHHELD_2024),
    )

    run, events = ask(library.folder, QUESTION)

    search, read = tool_results(events)
    assert search["tool_output"].startswith("6 passages from ")  # the summary stays one line
    found = search["tool_output_data"]
    assert (found["query"], "notice" in found) == ("federal income tax withheld 2024", False)
    top = found["documents"][0]
    assert (top["path"], top["score"]) == ("finance/W2_2024.pdf", top["chunks"][0]["score"])
    assert isinstance(top["score"], float) and top["score"] > 0
    cited = answer_message(run).content["citations"][0]
    snippets = {chunk["n"]: chunk for document in found["documents"] for chunk in document["chunks"]}
    assert snippets[cited["n"]]["snippet"] == "Federal income tax withheld on the 2024 W-2 was 12,300 dollars."
    assert snippets[cited["n"]]["location"] == "page 2"
    # The model got both blocks of the read as seen_before; the page still shows their text.
    blocks = read["tool_output_data"]["blocks"]
    assert {block["n"] for block in blocks} == {chunk["n"] for chunk in top["chunks"]}
    assert all(block["snippet"] for block in blocks)
    assert [call["output_data"] for call in run.tool_calls] == [search["tool_output_data"], read["tool_output_data"]]


def test_the_model_gets_tools_and_results_paired_with_its_call_ids(library, scripted):
    scripted.push(tool_call_response(("search_folder", {"query": "tax withheld"})), cite(WITHHELD_2024))

    ask(library.folder, QUESTION)

    first, second = scripted.requests
    assert first.system.startswith(AGENT_SYSTEM_PROMPT) and "at most 3 rounds" in first.system
    assert "search_folder" in {tool.name for tool in first.tools} and len(first.tools) == 13
    assert [m.role for m in first.messages] == [Role.USER] and first.messages[0].content.endswith(QUESTION)
    assistant, result = second.messages[-2:]
    assert assistant.role is Role.ASSISTANT and assistant.tool_calls[0].name == "search_folder"
    assert result.role is Role.TOOL and result.tool_call_id == assistant.tool_calls[0].id
    assert json.loads(result.content)["documents"][0]["chunks"][0]["n"] == 1


def test_refinement_empty_search_rewrite_search_answer(library, scripted, settings):
    settings.AGENT_MAX_ITERATIONS = 4  # three tool rounds, then the answer
    router = ScriptedProvider([text_response("federal income tax withheld")])

    def search_the_rewrite(request: LLMRequest) -> LLMResponse:
        rewritten = tool_payloads(request)[-1]["rewritten_query"]
        return tool_call_response(("search_folder", {"query": rewritten}))

    scripted.push(
        tool_call_response(("search_folder", {"query": "money kept back by my boss", "mode": "keyword"})),
        tool_call_response(("rewrite_query", {"original_query": "money kept back by my boss", "feedback": "empty"})),
        search_the_rewrite,
        cite(WITHHELD_2024),
    )

    with use_provider_for_tests(router, role="router"):
        run, events = ask(library.folder, QUESTION)

    assert run.status == RunStatus.COMPLETED
    assert [(c["name"], c["input"].get("query")) for c in run.tool_calls] == [
        ("search_folder", "money kept back by my boss"),
        ("rewrite_query", None),
        ("search_folder", "federal income tax withheld"),
    ]
    assert tool_results(events)[0]["tool_output"] == "0 passages from 0 files"
    assert [e.data["phase"] for e in events if e.type == "status"] == [
        "planning",
        "searching",
        "rewriting",
        "searching",
        "generating",
    ]
    assert answer_message(run).content["citations"][0]["path"] == "finance/W2_2024.pdf"
    trace = run.metrics["search_trace"]
    assert trace[0] == 'search_folder "money kept back by my boss" (keyword): 0 passages, 0 new'
    assert trace[1] == 'rewrite_query "money kept back by my boss" -> "federal income tax withheld": 0 passages, 0 new'
    assert trace[2].startswith('search_folder "federal income tax withheld" (hybrid): ')
    assert run.metrics["searches"] == 2 and run.metrics["llm_calls"] == 5  # four agent turns and the router


def test_comparison_runs_the_calls_of_one_turn_concurrently(library, scripted, monkeypatch):
    w2_2024, w2_2023 = library.file("W2_2024.pdf"), library.file("W2_2023.pdf")
    spans: list[tuple[str, float, float]] = []
    real_file_blocks = documents_module.file_blocks

    def slow_file_blocks(**kwargs):
        started = time.monotonic()
        time.sleep(0.4)
        blocks = real_file_blocks(**kwargs)
        spans.append((threading.current_thread().name, started, time.monotonic()))
        return blocks

    monkeypatch.setattr(documents_module, "file_blocks", slow_file_blocks)
    scripted.push(
        tool_call_response(
            ("search_folder", {"query": "2024 W-2 wages"}), ("search_folder", {"query": "2023 W-2 wages"})
        ),
        tool_call_response(("read_document", {"doc_id": w2_2024.pk}), ("read_document", {"doc_id": w2_2023.pk})),
        lambda request: LLMResponse(
            text=(
                f"Wages rose from 79,000 dollars [{number_of(request, 'wages of 79,000')}] "
                f"to 84,500 dollars [{number_of(request, 'wages of 84,500')}]."
            )
        ),
    )

    run, events = ask(library.folder, "Compare my W-2 wages in 2023 and 2024")

    assert run.status == RunStatus.COMPLETED
    (_, first_start, first_end), (_, second_start, second_end) = spans
    assert first_start < second_end and second_start < first_end, "the two reads did not overlap"
    assert {name for name, _, _ in spans} != {threading.current_thread().name}
    read_turn = [e.type for e in events if e.data.get("iteration") == 2 and e.type.startswith("tool_")]
    assert read_turn == ["tool_call", "tool_call", "tool_result", "tool_result"]
    citations = answer_message(run).content["citations"]
    assert [(c["path"], c["location"]) for c in citations] == [
        ("finance/W2_2023.pdf", "page 1"),
        ("finance/W2_2024.pdf", "page 1"),
    ]
    assert run.metrics["searches"] == 2 and run.metrics["reads"] == 2 and run.iterations == 3
    # Chunks found by both searches, and again by the reads, are numbered once.
    assert run.metrics["passages"] == Chunk.objects.filter(folder=library.folder).count() == 6


def test_invalid_arguments_and_unknown_tools_come_back_as_errors_and_the_loop_goes_on(library, scripted):
    scripted.push(
        tool_call_response(("search_folder", {"query": "tax", "k": 500}), ("launch_rockets", {"count": 3})),
        tool_call_response(("search_folder", {"query": "tax"})),
        text_response("Tax withheld: 12,300 dollars [1]."),
    )

    run, events = ask(library.folder, QUESTION)

    assert run.status == RunStatus.COMPLETED and run.fallback_reason == ""
    first, unknown, retry = tool_results(events)
    assert (first["status"], first["tool_output"]) == ("error", "invalid arguments")
    assert (unknown["status"], unknown["tool_output"]) == ("error", "unknown tool 'launch_rockets'")
    assert retry["status"] == "complete"
    details = tool_payloads(scripted.requests[1])[0]["details"]
    assert details == [{"field": "k", "problem": "Input should be less than or equal to 20"}]


def test_standard_mode_is_unchanged_by_agent_mode(library, scripted, monkeypatch):
    """`agent_mode: false` runs exactly what ran before agent mode existed."""

    def run_standard():
        scripted.push(text_response("Total wages were 84,500 dollars [1]."))
        run, events = ask(library.folder, "How much were the total wages on the 2024 W-2?", agent_mode=False)
        request = scripted.requests[-1]
        comparable = [
            (
                e.type,
                {
                    k: v
                    for k, v in e.data.items()
                    if k not in {"run_id", "message_id", "id", "created_at", "conversation_id", "timestamp"}
                },
            )
            for e in events
        ]
        for _, data in comparable:
            data.get("metadata", {}).pop("run_id", None)
            data.get("metadata", {}).pop("timings_ms", None)
            data.get("metadata", {}).pop("waited_ms", None)
        return run, comparable, request

    with_agent = run_standard()
    monkeypatch.setattr(services, "RUNNERS", {"standard": chat_run_standard})
    without_agent = run_standard()

    assert with_agent[0].mode == without_agent[0].mode == "standard"
    assert with_agent[1] == without_agent[1]
    assert [e[0] for e in with_agent[1]][:2] == ["status", "status"] and "tool_call" not in {
        e[0] for e in with_agent[1]
    }
    assert with_agent[2].tools == without_agent[2].tools == ()
    assert with_agent[2].messages == without_agent[2].messages
    assert with_agent[0].tool_calls == [] and with_agent[0].iterations == 0


def test_a_follow_up_question_carries_the_conversation(library, scripted):
    scripted.push(tool_call_response(("search_folder", {"query": "tax withheld"})), cite(WITHHELD_2024))
    first, _ = ask(library.folder, QUESTION)
    scripted.push(text_response("Acme Corporation paid them [1]."))

    second, _ = ask(library.folder, "And who paid those wages?", conversation=first.conversation)

    messages = scripted.requests[-1].messages
    assert [m.role for m in messages] == [Role.USER, Role.ASSISTANT, Role.USER]
    assert messages[0].content == QUESTION and messages[1].content.startswith("Federal income tax withheld")
    assert messages[2].content.endswith("And who paid those wages?")
    assert second.status == RunStatus.COMPLETED and second.conversation_id == first.conversation_id

"""Agent mode through `run_execute` with the scripted provider: flows, limits, fallback, security."""

from __future__ import annotations

import json
import threading
import time

import pytest

from apps.chat import services
from apps.chat.agent import loop as loop_module
from apps.chat.agent.prompts import AGENT_SYSTEM_PROMPT, FINAL_ANSWER_SYSTEM_PROMPT
from apps.chat.agent.tools import documents as documents_module
from apps.chat.agent.tools import files as files_module
from apps.chat.models import Message, RunStatus
from apps.chat.standard import chat_run_standard
from apps.library.models import Chunk
from apps.llm.base import LLMUnavailableError
from apps.llm.factory import use_provider_for_tests
from apps.llm.scripted import ScriptedProvider, text_response, tool_call_response
from apps.llm.sources import parse_user_prompt
from apps.llm.types import LLMRequest, LLMResponse, Role, Usage
from tests.support.agent_requests import number_of, tool_payloads
from tests.support.agent_runs import SECRET_TEXT, ask, tool_results

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "How much federal income tax was withheld on my 2024 W-2?"
WITHHELD_2024 = "withheld on the 2024 W-2"


def cite(needle: str, template: str = "Federal income tax withheld was 12,300 dollars [{n}].", **usage: int):
    def respond(request: LLMRequest) -> LLMResponse:
        return LLMResponse(text=template.format(n=number_of(request, needle)), usage=Usage(**usage))

    return respond


def answer_message(run) -> Message:
    return Message.objects.get(pk=run.answer_id)


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


def test_the_model_gets_tools_and_results_paired_with_its_call_ids(library, scripted):
    scripted.push(tool_call_response(("search_folder", {"query": "tax withheld"})), cite(WITHHELD_2024))

    ask(library.folder, QUESTION)

    first, second = scripted.requests
    assert first.system.startswith(AGENT_SYSTEM_PROMPT) and "at most 6 rounds" in first.system
    assert "search_folder" in {tool.name for tool in first.tools} and len(first.tools) == 12
    assert [m.role for m in first.messages] == [Role.USER] and first.messages[0].content.endswith(QUESTION)
    assistant, result = second.messages[-2:]
    assert assistant.role is Role.ASSISTANT and assistant.tool_calls[0].name == "search_folder"
    assert result.role is Role.TOOL and result.tool_call_id == assistant.tool_calls[0].id
    assert json.loads(result.content)["results"][0]["n"] == 1


def test_refinement_empty_search_rewrite_search_answer(library, scripted):
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


def test_iteration_cap_forces_an_answer_from_what_was_gathered_and_says_so(library, scripted, settings):
    settings.AGENT_MAX_ITERATIONS = 2
    final_requests: list[LLMRequest] = []

    def final(request: LLMRequest) -> LLMResponse:
        final_requests.append(request)
        prompt = parse_user_prompt(request.messages[-1].content)
        n = next(s.n for s in prompt.sources if "withheld on the 2024" in s.text)
        return LLMResponse(text=f"Federal income tax withheld was 12,300 dollars [{n}].")

    scripted.push(
        tool_call_response(("search_folder", {"query": "tax withheld"})),
        tool_call_response(("search_folder", {"query": "W-2 2024"})),  # still only tool calls at the cap
        final,
    )

    run, events = ask(library.folder, QUESTION)

    assert run.status == RunStatus.COMPLETED and run.fallback_reason == ""
    (request,) = final_requests
    assert request.tools == () and request.system == FINAL_ANSWER_SYSTEM_PROMPT and request.stream
    assert [m.role for m in request.messages] == [Role.USER]  # a fresh prompt, no tool-call turns
    prompt = request.messages[-1].content
    assert "<research_trace>" in prompt and "limit of 2 tool rounds reached" in prompt
    assert 'search_folder "tax withheld" (hybrid)' in prompt and 'search_folder "W-2 2024" (hybrid)' in prompt
    assert parse_user_prompt(prompt).question == QUESTION
    answer = answer_message(run)
    assert answer.content["text"].startswith("Federal income tax withheld was 12,300 dollars [")
    assert "research step limit (2)" in answer.content["text"]
    assert "".join(e.data["text"] for e in events if e.type == "text_delta") == answer.content["text"]
    assert answer.content["citations"][0]["location"] == "page 2"
    assert run.iterations == 2 and len(run.tool_calls) == 2
    assert run.metrics["finish"] == "iteration_limit" and run.metrics["forced_final_answer"] is True
    generating = [e.data for e in events if e.type == "status" and e.data["phase"] == "generating"]
    assert [{key: value for key, value in data.items() if key != "timestamp"} for data in generating] == [
        {
            "phase": "generating",
            "iteration": 2,
            "forced": True,
            "reason": "iteration_limit",
            "message": "Step 2: Writing the answer (iteration_limit)",
        }
    ]


def test_an_empty_answer_is_replaced_by_a_forced_one(library, scripted):
    scripted.push(
        tool_call_response(("search_folder", {"query": "tax withheld"})),
        LLMResponse(text="  "),
        text_response("Nothing certain, but see [1]."),
    )

    run, _ = ask(library.folder, QUESTION)

    assert answer_message(run).content["text"] == "Nothing certain, but see [1]."
    assert run.metrics["finish"] == "empty_answer" and scripted.requests[-1].tools == ()


def test_total_timeout_falls_back_to_standard_mode(library, scripted, settings):
    settings.AGENT_TOTAL_TIMEOUT_SECONDS = 0.6

    def hang(request: LLMRequest) -> LLMResponse:
        time.sleep(2)
        return text_response("too late")

    scripted.push(
        tool_call_response(("search_folder", {"query": "tax withheld"})),
        hang,
        text_response("Standard mode says 12,300 dollars [1]."),
    )
    started = time.monotonic()

    run, events = ask(library.folder, QUESTION)

    assert time.monotonic() - started < 1.8  # did not wait for the hung model call
    assert run.status == RunStatus.COMPLETED and run.fallback_reason == "total timeout of 0.6 s reached"
    assert answer_message(run).content["text"] == "Standard mode says 12,300 dollars [1]."
    assert answer_message(run).metadata["fallback_reason"] == run.fallback_reason
    fallback = next(e.data for e in events if e.type == "status" and e.data["phase"] == "fallback")
    assert fallback["reason"] == run.fallback_reason and fallback["message"].startswith("Falling back")
    assert run.metrics["fallback_used"] is True and run.metrics["agent"]["finish"] == "fallback"
    assert run.iterations == 2 and [c["name"] for c in run.tool_calls] == ["search_folder"]
    assert scripted.requests[-1].tools == ()  # the standard-mode request
    assert "too late" not in "".join(e.data.get("text", "") for e in events)


def test_a_slow_tool_times_out_as_an_error_result_and_the_loop_goes_on(library, scripted, settings, monkeypatch):
    settings.AGENT_TOOL_TIMEOUT_SECONDS = 0.3

    def slow_stats(**kwargs):
        time.sleep(1.5)
        return None

    monkeypatch.setattr(files_module, "folder_stats", slow_stats)
    scripted.push(
        tool_call_response(("get_stats", {}), ("search_folder", {"query": "tax withheld"})),
        cite(WITHHELD_2024),
    )
    started = time.monotonic()

    run, events = ask(library.folder, QUESTION)

    assert time.monotonic() - started < 1.4
    assert run.status == RunStatus.COMPLETED and run.fallback_reason == ""
    stats, search = tool_results(events)
    assert (stats["tool_name"], stats["status"], stats["tool_output"]) == (
        "get_stats",
        "error",
        "get_stats timed out after 0.3 s",
    )
    assert search["status"] == "complete"
    stats_message = next(m for m in scripted.requests[1].messages if m.role is Role.TOOL)
    assert stats_message.is_error and json.loads(stats_message.content) == {"error": "get_stats timed out after 0.3 s"}
    assert run.metrics["tool_errors"] == 1


def test_provider_failure_falls_back_to_standard_mode(library, scripted):
    scripted.push(
        tool_call_response(("search_folder", {"query": "tax withheld"})),
        LLMUnavailableError("upstream 503"),
        text_response("Federal income tax withheld was 12,300 dollars [1]."),
    )

    run, events = ask(library.folder, QUESTION)

    assert run.status == RunStatus.COMPLETED
    assert run.fallback_reason == "model error: upstream 503"
    assert run.metrics["fallback_used"] is True and run.metrics["searches"] == 1  # standard's own search
    assert run.metrics["agent"]["searches"] == 1 and run.metrics["agent"]["llm_calls"] == 2
    assert [c["name"] for c in run.tool_calls] == ["search_folder"]
    after = [e.data.get("phase") or e.type for e in events][[e.type for e in events].index("tool_result") + 1 :]
    assert after[:3] == ["fallback", "searching", "generating"] and after[-2:] == ["message", "done"]
    assert answer_message(run).content["citations"][0]["n"] == 1


def test_a_broken_loop_falls_back_to_standard_mode(library, scripted, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("render bug")

    monkeypatch.setattr(loop_module.AgentContext, "render", broken)
    scripted.push(tool_call_response(("search_folder", {"query": "tax"})), text_response("Standard [1]."))

    run, _ = ask(library.folder, QUESTION)

    assert run.status == RunStatus.COMPLETED and run.fallback_reason == "agent loop failed: RuntimeError: render bug"


def test_another_folders_file_ids_are_refused_and_nothing_leaks(library, secret_file, scripted):
    scripted.push(
        tool_call_response(
            ("read_document", {"doc_id": secret_file.pk}),
            ("get_file", {"file_id": secret_file.pk}),
            ("get_file_metadata", {"file_id": secret_file.pk}),
            ("read_multiple_documents", {"doc_ids": [secret_file.pk]}),
        ),
        text_response("I found nothing about that in this folder."),
    )

    run, events = ask(library.folder, "What is the merger price in deals/merger.txt?")

    results = tool_results(events)
    assert [r["status"] for r in results] == ["error", "error", "error", "complete"]
    assert [r["tool_output"] for r in results[:3]] == ["not found or access denied"] * 3
    payloads = tool_payloads(scripted.requests[1])
    assert payloads[:3] == [{"error": "not found or access denied"}] * 3
    assert payloads[3]["documents"] == [{"doc_id": secret_file.pk, "error": "not found or access denied"}]
    everything = json.dumps([[m.content for m in r.messages] for r in scripted.requests])
    everything += json.dumps([e.data for e in events]) + json.dumps(run.tool_calls)
    assert SECRET_TEXT not in everything and "merger.txt" not in everything.replace("deals/merger.txt?", "")


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

"""Agent mode through `run_execute` with the scripted provider: limits, timeouts, fallback, security."""

from __future__ import annotations

import json
import time

import pytest

from apps.chat.agent import loop as loop_module
from apps.chat.agent.prompts import FINAL_ANSWER_SYSTEM_PROMPT
from apps.chat.agent.tools import files as files_module
from apps.chat.models import AgentRun, RunStatus
from apps.chat.services import run_execute
from apps.llm.base import LLMUnavailableError
from apps.llm.scripted import text_response, tool_call_response
from apps.llm.sources import parse_user_prompt
from apps.llm.types import LLMRequest, LLMResponse, Role
from tests.support.agent_requests import tool_payloads
from tests.support.agent_runs import QUESTION, SECRET_TEXT, WITHHELD_2024, answer_message, ask, cite, tool_results

pytestmark = pytest.mark.django_db(transaction=True)


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


def final_answer(request: LLMRequest) -> LLMResponse:
    """The forced answer (a fresh prompt of numbered sources), citing the 2024 withholding."""
    prompt = parse_user_prompt(request.messages[-1].content)
    n = next(s.n for s in prompt.sources if WITHHELD_2024 in s.text)
    return LLMResponse(text=f"Federal income tax withheld was 12,300 dollars [{n}].")


def test_a_request_asks_for_fewer_tool_rounds_never_more(auth_client, library, scripted, monkeypatch):
    monkeypatch.setattr("apps.chat.enqueue.execute_run", lambda *args: None)

    def post(**body):
        return auth_client.post(
            f"/api/folders/{library.folder.pk}/chat", {"message": QUESTION, "agent_mode": True, **body}, format="json"
        )

    assert post(max_iterations=0).status_code == 400
    assert AgentRun.objects.get(pk=post(max_iterations=50).json()["run_id"]).max_iterations == 3  # the setting
    assert AgentRun.objects.get(pk=post().json()["run_id"]).max_iterations is None
    run_id = post(max_iterations=1).json()["run_id"]
    assert auth_client.get(f"/api/runs/{run_id}").json()["max_iterations"] == 1
    scripted.push(tool_call_response(("search_folder", {"query": "tax withheld"})), final_answer)

    run = run_execute(run_id=run_id)

    assert run.status == RunStatus.COMPLETED and run.iterations == 1 and len(run.tool_calls) == 1
    assert "at most 1 round of tool calls" in scripted.requests[0].system
    assert scripted.requests[1].system == FINAL_ANSWER_SYSTEM_PROMPT and scripted.requests[1].tools == ()
    assert run.metrics["finish"] == "iteration_limit"
    assert (
        answer_message(run)
        .content["text"]
        .endswith("research step limit (1), so this answer is based on what I found until then.)")
    )


def hang(request: LLMRequest) -> LLMResponse:
    """A model turn slower than any deadline here; whatever it writes must never show."""
    time.sleep(2)
    return text_response("too late")


def test_a_timed_out_agent_answers_from_what_it_gathered_without_a_standard_run(library, scripted, settings):
    settings.AGENT_TOTAL_TIMEOUT_SECONDS = 1.2
    settings.AGENT_ANSWER_RESERVE_SECONDS = 0.5  # tool rounds stop at 0.7 s

    scripted.push(tool_call_response(("search_folder", {"query": "tax withheld"})), hang, final_answer)
    started = time.monotonic()

    run, events = ask(library.folder, QUESTION)

    assert time.monotonic() - started < 1.2  # the answer came within the total timeout
    assert run.status == RunStatus.COMPLETED and run.fallback_reason == ""
    answer = answer_message(run).content
    assert answer["text"].startswith("Federal income tax withheld was 12,300 dollars [")
    assert answer["text"].endswith(
        "(I ran out of research time (1.2 s), so this answer is based on what I found until then.)"
    )
    assert answer["citations"][0]["location"] == "page 2"
    final = scripted.requests[-1]
    assert final.system == FINAL_ANSWER_SYSTEM_PROMPT and final.tools == ()
    assert "time limit of 1.2 s nearly reached" in final.messages[-1].content
    assert len(scripted.requests) == 3  # search turn, abandoned turn, answer: no standard-mode request
    assert "fallback" not in [e.data.get("phase") for e in events if e.type == "status"]
    assert run.metrics["finish"] == "timeout" and run.metrics["forced_final_answer"] is True
    assert run.metrics["searches"] == 1 and run.metrics["answered_offline"] is False
    assert "too late" not in "".join(e.data.get("text", "") for e in events)


def test_when_the_model_is_too_slow_to_answer_the_gathered_passages_answer_offline(library, scripted, settings):
    settings.AGENT_TOTAL_TIMEOUT_SECONDS = 1.2
    settings.AGENT_ANSWER_RESERVE_SECONDS = 0.5
    scripted.push(tool_call_response(("search_folder", {"query": "federal income tax withheld 2024"})), hang, hang)
    started = time.monotonic()

    run, events = ask(library.folder, QUESTION)

    assert time.monotonic() - started < 1.5  # the total timeout plus the offline answer's moment
    assert run.status == RunStatus.COMPLETED and run.fallback_reason == ""
    answer = answer_message(run).content
    cited = {c["path"]: c["location"] for c in answer["citations"]}
    assert "12,300" in answer["text"] and cited.get("finance/W2_2024.pdf") == "page 2"
    assert "ran out of research time (1.2 s)" in answer["text"]
    assert run.metrics["finish"] == "timeout" and run.metrics["answered_offline"] is True
    assert len(scripted.requests) == 3 and scripted.requests[-1].system == FINAL_ANSWER_SYSTEM_PROMPT
    assert "too late" not in "".join(e.data.get("text", "") for e in events)
    assert "".join(e.data["text"] for e in events if e.type == "text_delta") == answer["text"]


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


def test_provider_failure_answers_offline_from_what_was_gathered(library, scripted):
    scripted.push(
        tool_call_response(("search_folder", {"query": "tax withheld"})),
        LLMUnavailableError("upstream 503"),
    )

    run, events = ask(library.folder, QUESTION)

    assert run.status == RunStatus.COMPLETED and scripted.remaining == 0  # the model is not asked again
    assert run.fallback_reason == "The model service could not be reached."
    assert run.metrics["fallback_used"] is True and run.metrics["searches"] == 1  # standard's own search
    assert run.metrics["agent"]["searches"] == 1 and run.metrics["agent"]["llm_calls"] == 2
    assert run.metrics["llm_calls"] == 0 and run.metrics["model_failure"] == "unreachable"
    assert [c["name"] for c in run.tool_calls] == ["search_folder"]
    after = [e.data.get("phase") or e.type for e in events][[e.type for e in events].index("tool_result") + 1 :]
    assert after[:4] == ["fallback", "searching", "generating", "notice"] and after[-2:] == ["message", "done"]
    answer = answer_message(run)
    assert answer.metadata["model"] == "extractive" and answer.content["citations"]
    assert answer.metadata["notice"] == "The model is unavailable; these are the most relevant passages."


def test_a_broken_loop_falls_back_to_standard_mode(library, scripted, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("render bug")

    monkeypatch.setattr(loop_module.AgentContext, "render", broken)
    scripted.push(tool_call_response(("search_folder", {"query": "tax"})), text_response("Standard [1]."))

    run, _ = ask(library.folder, QUESTION)

    assert run.status == RunStatus.COMPLETED and run.fallback_reason == "The agent ran into a problem."


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

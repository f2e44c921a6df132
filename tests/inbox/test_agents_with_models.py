"""Inbox runs end to end with models: scripted ones, then the real SDKs at the wire stub.

On a copy of the sample folder. Agent tools run in worker threads with their own connections,
hence transactional tests. test_agents.py runs the same inbox offline.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from apps.inbox.organize_agent import ORGANIZE_SYSTEM_PROMPT
from apps.inbox.query_agent import HANDOFF_TEXT, QUERY_SYSTEM_PROMPT
from apps.llm.base import LLMUnavailableError
from apps.llm.scripted import text_response, tool_call_response
from apps.llm.types import Usage
from apps.organize.decisions import suggestion_respond
from apps.organize.models import FileMove, OrganizationSettings, OrganizationSuggestion
from apps.organize.services import file_suggest, file_suggest_auto
from tests.support.inbox_runs import LEASE, W2, answer, send, typed
from tests.support.llm_wire_stub import StubToolCall

pytestmark = pytest.mark.django_db(transaction=True)


def router_json(intent: str, confidence: float = 0.9, **params):
    return text_response(json.dumps({"intent": intent, "confidence": confidence, "params": params}))


# -- scripted models -------------------------------------------------------------------------------


def test_scripted_query_agent_replies_through_respond_to_user_in_two_model_turns(sample, scripted):
    w2 = sample.file(W2)
    scripted.push(
        router_json("query", search_query="W-2 2024"),
        tool_call_response(("search_files", {"query": "W-2 2024", "type": "application/pdf", "folder": "inbox/"})),
        tool_call_response(("respond_to_user", {"message": "Here is your 2024 W-2 [1].", "files": [w2.pk]})),
    )

    run, events = send(sample.folder, "where is my W-2 from 2024?")

    assert scripted.remaining == 0 and len(scripted.requests) == 3  # no model turn after the reply
    agent_request = scripted.requests[1]
    assert agent_request.system.startswith(QUERY_SYSTEM_PROMPT)
    assert {tool.name for tool in agent_request.tools} == {
        "search_files",
        "get_file_content",
        "get_file_metadata",
        "summarize",
        "list_recent_files",
        "get_stats",
        "list_inbox",
        "respond_to_user",
        "handoff_to_organize",
    }
    search = next(event.data for event in events if event.type == "tool_result")
    assert search["tool_output"].startswith("1 files")  # the type and folder filters left the W-2 only
    reply = answer(run)
    assert reply.content["text"] == "Here is your 2024 W-2 [1]."
    assert [citation["path"] for citation in reply.content["citations"]] == [W2]
    (cards,) = typed(run, "search_result")
    assert [result["fileId"] for result in cards.content["results"]] == [w2.pk]


def test_scripted_handoff_from_query_to_organize(sample, scripted):
    scripted.push(
        router_json("query", search_query="W-2"),
        tool_call_response(("search_files", {"query": "W-2"})),
        tool_call_response(
            ("handoff_to_organize", {"files": [W2], "target_folder": "taxes", "reason": "user wants it filed"})
        ),
        tool_call_response(("read_guideline", {}), ("get_folder_tree", {"depth": 1})),
        tool_call_response(
            (
                "suggest_organization",
                {
                    "path": W2,
                    "target": "taxes/",
                    "reasoning": "The guideline says W-2s go to taxes/.",
                    "confidence": 0.9,
                    "alternatives": [{"folder": "work/", "reasoning": "It came from the employer."}],
                },
            )
        ),
        tool_call_response(("respond_to_user", {"message": "Shall I move the W-2 to taxes/?"})),
    )

    run, events = send(sample.folder, "find my W-2 and file it where it belongs")

    assert scripted.remaining == 0
    assert scripted.requests[3].system.startswith(ORGANIZE_SYSTEM_PROMPT)
    assert any(event.type == "status" and event.data["phase"] == "handoff" for event in events)
    assert "Files to organize: inbox/W2_2024.pdf" in scripted.requests[3].messages[-1].content
    (suggestion,) = typed(run, "suggestion")
    assert suggestion.metadata["agent"] == "organize_agent"
    assert suggestion.content["alternatives"] == [{"folder": "work/", "reasoning": "It came from the employer."}]
    assert run.metrics["handoff"] == {"from": "query", "to": "organize"}
    assert answer(run).content["text"] == "Shall I move the W-2 to taxes/?"


def test_a_successful_handoff_ends_the_query_agents_loop_with_no_further_model_call(sample, scripted):
    scripted.push(
        router_json("query", search_query="W-2"),
        tool_call_response(("search_files", {"query": "W-2"})),
        tool_call_response(("handoff_to_organize", {"files": [W2], "target_folder": "taxes", "reason": "file it"})),
        tool_call_response(("suggest_organization", {"path": W2, "target": "taxes/", "confidence": 0.9})),
        tool_call_response(("respond_to_user", {"message": "Shall I move the W-2 to taxes/?"})),
    )

    run, events = send(sample.folder, "find my W-2 and file it")

    assert scripted.remaining == 0 and len(scripted.requests) == 5
    # The request after the handoff turn is the organize agent's first: the query agent asked nothing more.
    assert scripted.requests[2].system.startswith(QUERY_SYSTEM_PROMPT)
    assert scripted.requests[3].system.startswith(ORGANIZE_SYSTEM_PROMPT)
    query = run.metrics["query_agent"]
    assert (query["llm_calls"], query["iterations"], query["finish"]) == (2, 2, "answered")
    assert run.metrics["llm_calls"] == 2 and run.iterations == 4  # the organize agent's two turns, then both
    shown = "".join(event.data["text"] for event in events if event.type == "text_delta")
    assert shown == HANDOFF_TEXT + "Shall I move the W-2 to taxes/?"
    (handed,) = [event.data for event in events if event.type == "status" and event.data.get("to") == "organize"]
    assert (handed["phase"], handed["files"], handed["reason"]) == ("handoff", 1, "file it")
    assert answer(run).content["text"] == "Shall I move the W-2 to taxes/?"


def test_a_handoff_that_fails_does_not_end_the_loop(sample, scripted):
    scripted.push(
        router_json("query", search_query="nope"),
        tool_call_response(("handoff_to_organize", {"files": ["inbox/nope.pdf"], "reason": "file it"})),
        text_response("I found no inbox/nope.pdf. Which file do you mean?"),
    )

    run, events = send(sample.folder, "file inbox/nope.pdf")

    assert scripted.remaining == 0 and len(scripted.requests) == 3  # the model answered after the failure
    (result,) = [event.data for event in events if event.type == "tool_result"]
    assert result["status"] == "error" and "not found" in result["tool_output"]
    assert (run.metrics["agent"], run.metrics["llm_calls"], run.metrics["finish"]) == ("query", 2, "answered")
    assert "handoff" not in run.metrics and "query_agent" not in run.metrics
    assert not any(event.type == "status" and event.data.get("to") == "organize" for event in events)
    assert HANDOFF_TEXT not in "".join(event.data["text"] for event in events if event.type == "text_delta")
    assert answer(run).content["text"] == "I found no inbox/nope.pdf. Which file do you mean?"
    assert not OrganizationSuggestion.objects.exists()


def test_the_organize_agent_cannot_offer_a_declined_folder_or_move_without_consent(sample, scripted, user):
    declined = file_suggest(file_id=sample.file(W2).pk, on_demand=True).suggestion
    suggestion_respond(suggestion_id=declined.pk, owner_id=user.pk, action="reject")
    scripted.push(
        router_json("organize", file_path=W2),
        tool_call_response(("suggest_organization", {"path": W2, "target": "taxes/", "confidence": 0.95})),
        tool_call_response(("suggest_organization", {"path": W2, "target": "work/", "confidence": 0.6})),
        lambda request: tool_call_response(
            ("execute_move", {"suggestion_id": OrganizationSuggestion.objects.get(status="pending").pk})
        ),
        tool_call_response(("respond_to_user", {"message": "I suggest work/ instead; say yes to move it."})),
    )

    _run, events = send(sample.folder, "organize the W-2")

    results = [event.data for event in events if event.type == "tool_result"]
    assert results[0]["status"] == "error" and "declined it for this file" in results[0]["tool_output"]
    assert results[1]["status"] == "complete"
    assert results[2]["status"] == "error" and "auto-move threshold" in results[2]["tool_output"]
    assert (sample.root / W2).is_file() and not FileMove.objects.exists()


def test_execute_move_is_allowed_above_the_auto_move_threshold(sample, scripted, user):
    OrganizationSettings.objects.create(owner=user, auto_move=True, auto_move_threshold=0.9)
    scripted.push(
        router_json("organize", file_path=W2),
        tool_call_response(("suggest_organization", {"path": W2})),
        lambda request: tool_call_response(
            ("execute_move", {"suggestion_id": OrganizationSuggestion.objects.get(status="pending").pk})
        ),
        tool_call_response(("respond_to_user", {"message": "Moved the W-2 to taxes/."})),
    )

    _run, events = send(sample.folder, "organize the W-2")

    assert (sample.root / "taxes/W2_2024.pdf").is_file()
    assert FileMove.objects.get().to_path == "taxes/W2_2024.pdf"
    moved = [event.data for event in events if event.type == "message" and event.data["type"] == "action_result"]
    assert [message["content"]["details"] for message in moved] == ["Moved inbox/W2_2024.pdf to taxes/W2_2024.pdf."]


def test_a_failing_organize_model_falls_back_to_the_policy(sample, scripted):
    scripted.push(router_json("organize"), LLMUnavailableError("down"))

    run, _events = send(sample.folder, "organize my inbox")

    assert run.fallback_reason == "The model service could not be reached."
    assert len(typed(run, "suggestion")) == 4
    assert "- inbox/W2_2024.pdf → taxes/" in answer(run).content["text"]


def test_a_failing_query_model_falls_back_to_standard_mode(sample, scripted):
    scripted.push(router_json("query"), LLMUnavailableError("down"))

    run, _ = send(sample.folder, "where is the W-2?")

    assert run.fallback_reason == "The model service could not be reached." and scripted.remaining == 0
    assert answer(run).metadata["notice"] == "The model is unavailable; these are the most relevant passages."
    assert answer(run).metadata["model"] == "extractive"


def test_a_query_fallback_counts_the_tokens_the_failed_agent_spent(sample, scripted):
    searched = replace(tool_call_response(("search_files", {"query": "W-2"})), usage=Usage(100, 5))
    scripted.push(router_json("query"), searched, LLMUnavailableError("down"))

    run, _ = send(sample.folder, "where is the W-2?")

    assert run.metrics["agent"] == "query" and run.metrics["model_failure"] == "unreachable"
    assert run.metrics["tokens"] == {"input": 100, "output": 5}  # the offline answer costs none


def test_with_a_model_the_digest_hook_asks_the_organize_agent(sample, scripted, user):
    lease = sample.file(LEASE).pk
    scripted.push(
        tool_call_response(("read_guideline", {}), ("get_file_info", {"path": LEASE})),
        tool_call_response(
            (
                "suggest_organization",
                {"path": LEASE, "target": "personal/", "reasoning": "Line 27.", "confidence": 0.93},
            )
        ),
        text_response("Suggested personal/."),
    )

    outcome = file_suggest_auto(file_id=lease)

    assert outcome.suggestion is not None and outcome.suggestion.target_folder == "personal/"
    assert outcome.suggestion.message.metadata["agent"] == "organize_agent"
    info = scripted.requests[1].messages[-1].content
    assert "policy_candidates" in info and "personal/" in info


def test_with_a_model_the_digest_hook_respects_the_threshold_and_survives_failures(sample, scripted, user):
    OrganizationSettings.objects.create(owner=user, suggest_threshold=0.9)
    w2, invoice = sample.file(W2).pk, sample.file("inbox/invoice-INV-20931.txt").pk
    scripted.push(
        tool_call_response(("suggest_organization", {"path": W2, "target": "work/", "confidence": 0.5})),
        text_response("Not sure; leaving it."),
        LLMUnavailableError("down"),
    )

    unsure = file_suggest_auto(file_id=w2)
    failed = file_suggest_auto(file_id=invoice)

    assert unsure.suggestion is None and unsure.skipped == "the organize agent made no suggestion"
    assert failed.suggestion is not None and failed.suggestion.target_folder == "finance/"  # the policy
    assert failed.suggestion.message.metadata["agent"] == "policy"


# -- the real SDKs at the wire ---------------------------------------------------------------------


def test_query_agent_through_the_real_sdks(sample, sdk, wire_stub):
    w2 = sample.file(W2)
    wire_stub.reply_text('{"intent": "query", "confidence": 0.92, "params": {"search_query": "W-2"}}')
    wire_stub.reply_tool_calls(StubToolCall(id="call_1", name="search_files", arguments={"query": "W-2 wages"}))
    wire_stub.reply_tool_calls(
        StubToolCall(id="call_2", name="respond_to_user", arguments={"message": "Your W-2 [1].", "files": [w2.pk]})
    )

    run, _events = send(sample.folder, "show me my W-2")

    assert wire_stub.pending == 0 and len(wire_stub.requests) == 3
    offered = str(wire_stub.requests[1].body["tools"])
    assert "search_files" in offered and "handoff_to_organize" in offered
    assert answer(run).content["text"] == "Your W-2 [1]."
    assert answer(run).metadata["model"] == "stub-model"
    (cards,) = typed(run, "search_result")
    assert cards.content["results"][0]["fileId"] == w2.pk


def test_organize_agent_through_the_real_sdks(sample, sdk, wire_stub):
    wire_stub.reply_text('{"intent": "organize", "confidence": 0.9, "params": {}}')
    wire_stub.reply_tool_calls(StubToolCall(id="call_1", name="get_file_info", arguments={"path": LEASE}))
    wire_stub.reply_tool_calls(
        StubToolCall(id="call_2", name="suggest_organization", arguments={"path": LEASE, "target": "personal"})
    )
    wire_stub.reply_text("I suggest personal/ for the lease.")

    run, _ = send(sample.folder, "where should the lease renewal go?")

    (suggestion,) = typed(run, "suggestion")
    assert suggestion.content["targetFolder"] == "personal/"
    assert answer(run).content["text"] == "I suggest personal/ for the lease."


def test_a_handoff_through_the_real_sdks_needs_no_further_request_from_the_query_agent(sample, sdk, wire_stub):
    wire_stub.reply_text('{"intent": "query", "confidence": 0.9, "params": {"search_query": "W-2"}}')
    wire_stub.reply_tool_calls(
        StubToolCall(
            id="call_1",
            name="handoff_to_organize",
            arguments={"files": [W2], "target_folder": "taxes", "reason": "file it"},
        )
    )
    wire_stub.reply_tool_calls(
        StubToolCall(id="call_2", name="suggest_organization", arguments={"path": W2, "target": "taxes"})
    )
    wire_stub.reply_text("I suggest taxes/ for the W-2.")

    run, events = send(sample.folder, "file my W-2 under taxes")

    assert wire_stub.pending == 0 and len(wire_stub.requests) == 4  # router, query agent once, organize twice
    assert "handoff_to_organize" in str(wire_stub.requests[1].body["tools"])
    assert "handoff_to_organize" not in str(wire_stub.requests[2].body["tools"])  # the organize agent's turn
    assert run.metrics["query_agent"]["llm_calls"] == 1
    shown = "".join(event.data["text"] for event in events if event.type == "text_delta")
    assert shown == HANDOFF_TEXT + "I suggest taxes/ for the W-2."
    (suggestion,) = typed(run, "suggestion")
    assert suggestion.content["targetFolder"] == "taxes/"
    assert answer(run).content["text"] == "I suggest taxes/ for the W-2."

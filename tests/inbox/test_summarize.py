"""The query agent's summarize tool: its result is a `summary` message whose sources are the files
it summarises; offline the file's digest, with a model the model's summary."""

from __future__ import annotations

import pytest

from apps.chat.summaries import SUMMARY_SYSTEM_PROMPT
from apps.llm.scripted import text_response, tool_call_response
from tests.inbox.test_agents_with_models import router_json
from tests.support.inbox_runs import LEASE, W2, answer, send, typed

pytestmark = pytest.mark.django_db(transaction=True)


def tools_called(events) -> list[str]:
    return [event.data["tool_name"] for event in events if event.type == "tool_call"]


def test_offline_a_summary_request_is_answered_with_a_summary_message_and_its_source(sample) -> None:
    lease = sample.file(LEASE)

    run, events = send(sample.folder, "summarize my lease renewal")

    assert tools_called(events) == ["search_files", "summarize", "respond_to_user"]
    (summary,) = typed(run, "summary")
    assert summary.content["summary"] == lease.digest and lease.digest
    assert summary.content["sources"] == [
        {"fileId": lease.pk, "path": LEASE, "fileName": lease.name, "method": "digest"}
    ]
    assert any(event.type == "message" and event.data["type"] == "summary" for event in events)
    assert answer(run).content["text"] == lease.digest


def test_with_a_model_the_summary_is_the_models_and_lists_every_file(sample, scripted) -> None:
    w2, lease = sample.file(W2), sample.file(LEASE)
    scripted.push(
        router_json("query", search_query="W-2 and lease"),
        tool_call_response(("summarize", {"files": [W2, lease.pk]})),
        text_response("The W-2 reports 2024 wages."),  # the summaries, through the answer model
        text_response("The lease renews in 2025."),
        tool_call_response(("respond_to_user", {"message": "Both summarised.", "files": [w2.pk, lease.pk]})),
    )

    run, _ = send(sample.folder, "summarise my W-2 and my lease")

    summary_requests = [request for request in scripted.requests if request.system == SUMMARY_SYSTEM_PROMPT]
    assert len(summary_requests) == 2
    (summary,) = typed(run, "summary")
    assert summary.content["summary"] == (f"{W2}: The W-2 reports 2024 wages.\n\n{LEASE}: The lease renews in 2025.")
    assert [(source["fileId"], source["method"]) for source in summary.content["sources"]] == [
        (w2.pk, "model"),
        (lease.pk, "model"),
    ]


def test_a_file_that_is_not_there_is_an_error_the_agent_sees(sample, scripted) -> None:
    scripted.push(
        router_json("query"),
        tool_call_response(("summarize", {"files": ["inbox/nothing.pdf"]})),
        tool_call_response(("respond_to_user", {"message": "I could not find that file."})),
    )

    run, events = send(sample.folder, "summarize nothing.pdf")

    result = next(event.data for event in events if event.type == "tool_result")
    assert result["tool_output"].startswith("not found") or "inbox/nothing.pdf" in result["tool_output"]
    assert typed(run, "summary") == []

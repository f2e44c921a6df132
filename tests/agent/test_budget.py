"""Agent mode past the budget: the loop stops calling the model and answers, offline, from the
passages it gathered so far, saying the budget is used up."""

from __future__ import annotations

import pytest

from apps.llm.models import UsageRecord
from tests.support.agent_runs import QUESTION, answer_message, ask
from tests.support.llm_wire_stub import StubToolCall

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_agent_stops_calling_the_model_past_its_budget(library, sdk, wire_stub, settings):
    settings.LLM_DAILY_TOKENS_PER_USER = 100
    # The first turn searches and spends 110 tokens: every later turn is over the budget.
    wire_stub.reply_tool_calls(
        StubToolCall("call_s1", "search_folder", {"query": "federal income tax withheld 2024"}),
        input_tokens=90,
        output_tokens=20,
    )
    wire_stub.reply_tool_calls(StubToolCall("call_r1", "read_document", {"doc_id": library.file("W2_2024.pdf").pk}))
    wire_stub.reply_text("It was 12,300 dollars [1].")

    run, events = ask(library.folder, QUESTION)

    assert run.status == "completed", run.error
    assert len(wire_stub.requests) == 1 and wire_stub.pending == 2
    notices = [event.data for event in events if event.type == "notice"]
    assert [notice["failure"] for notice in notices] == ["budget"]
    assert "budget" in notices[0]["message"] and "resets at" in notices[0]["message"]
    answer = answer_message(run)
    assert "12,300" in answer.content["text"]  # the offline answer over the passages the search gathered
    cited = {citation["path"] for citation in answer.content["citations"]}
    assert "finance/W2_2024.pdf" in cited
    assert answer.metadata["notice"] == notices[0]["message"]
    (record,) = UsageRecord.objects.all()
    assert (record.run_id, record.input_tokens + record.output_tokens) == (run.pk, 110)

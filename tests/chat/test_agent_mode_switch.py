"""AGENT_MODE_ENABLED, seed 001's master switch: off, an agent request is answered in standard mode
with a notice, and the chat page offers no toggle. Through the chat API, with the real SDKs
against the wire stub."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.chat.agent.runner import AGENT_MODE_OFF, AGENT_MODE_OFF_REASON
from apps.chat.models import AgentRun
from apps.chat.services import chat_start, run_execute
from tests.support.agent_runs import tool_names
from tests.support.chat_api import ask_streamed, of_type
from tests.support.questions import W2_QUESTION

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = "Federal tax withheld was 12,300 dollars [1]."


@pytest.mark.parametrize("enabled", [True, False])
def test_an_agent_request_follows_the_switch(library, sdk, wire_stub, auth_client, settings, enabled):
    settings.AGENT_MODE_ENABLED = enabled
    wire_stub.reply_text(ANSWER)  # the agent's first turn answers at once; standard mode's one call

    run_id, events = ask_streamed(auth_client, library.folder, message=W2_QUESTION, agent_mode=True)

    (sent,) = wire_stub.requests
    assert ("search_folder" in tool_names(sent.body)) is enabled  # the agent offers tools; standard mode none
    notices = of_type(events, "notice")
    detail = auth_client.get(f"/api/conversations/{AgentRun.objects.get(pk=run_id).conversation_id}").json()
    answer = detail["messages"][-1]
    assert answer["text"].startswith(ANSWER)
    if enabled:
        assert notices == [] and "notice" not in answer["metadata"]
        return
    assert [c["path"] for c in answer["citations"]] == ["finance/W2_2024.pdf"]  # standard mode's search
    assert [(n["kind"], n["message"]) for n in notices] == [("agent_mode_disabled", AGENT_MODE_OFF)]
    assert answer["metadata"]["notice"] == AGENT_MODE_OFF  # the line the page shows above the answer
    assert answer["metadata"]["mode"] == "agent" and answer["metadata"]["fallback_reason"] == AGENT_MODE_OFF_REASON
    run = auth_client.get(f"/api/runs/{run_id}").json()
    assert run["mode"] == "agent" and run["metrics"]["agent_mode_disabled"] is True and run["iterations"] == 0
    assert of_type(events, "tool_call") == []


def test_a_run_queued_before_the_switch_went_off_answers_in_standard_mode(library, sdk, wire_stub, settings):
    queued = chat_start(user=library.folder.owner, folder=library.folder, text=W2_QUESTION, agent_mode=True)
    settings.AGENT_MODE_ENABLED = False
    wire_stub.reply_text(ANSWER)

    run = run_execute(run_id=queued.pk)

    assert run.status == "completed" and run.answer.metadata["notice"] == AGENT_MODE_OFF
    (sent,) = wire_stub.requests
    assert "tools" not in sent.body


def test_a_model_outage_with_the_switch_off_says_both(library, sdk, wire_stub, auth_client, settings):
    settings.AGENT_MODE_ENABLED = False
    wire_stub.fail(500)

    run_id, events = ask_streamed(auth_client, library.folder, message=W2_QUESTION, agent_mode=True)

    assert [n["kind"] for n in of_type(events, "notice")] == ["agent_mode_disabled", "model_unavailable"]
    answer = AgentRun.objects.get(pk=run_id).answer
    assert answer.metadata["notice"].startswith(AGENT_MODE_OFF + " ")
    assert answer.metadata["model"] == "extractive"


@pytest.mark.parametrize("enabled", [True, False])
def test_the_chat_page_offers_the_toggle_only_while_agent_mode_is_on(library, settings, enabled):
    settings.AGENT_MODE_ENABLED = enabled
    client = Client()
    client.force_login(library.folder.owner)

    page = client.get(f"/folders/{library.folder.pk}/")

    assert page.status_code == 200
    assert ('id="agent-mode"' in page.content.decode()) is enabled

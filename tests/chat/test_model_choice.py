"""LLM_MODELS_ALLOWED and a chat request's `model` (seed 001's models_allowed): the chosen model
makes every call of the run, through the real openai and anthropic SDKs against the wire stub, and
is recorded on the run and in its usage; any other model is a 400 naming the allowed ones."""

from __future__ import annotations

from decimal import Decimal

import pytest

from apps.chat.models import AgentRun, Conversation
from apps.chat.services import run_execute
from apps.llm.models import UsageRecord
from tests.support.chat_api import ask_streamed
from tests.support.llm_wire_stub import StubToolCall
from tests.support.questions import W2_QUESTION
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

# A cheaper model each provider offers, priced in LLM_PRICES, beside the configured one.
CHEAPER = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5"}


def test_a_model_not_allowed_is_400_naming_the_allowed_ones(library, auth_client, settings):
    settings.LLM_MODELS_ALLOWED = ["gpt-4o", "gpt-4o-mini"]

    response = auth_client.post(
        f"/api/folders/{library.folder.pk}/chat", {"message": W2_QUESTION, "model": "claude-opus"}, format="json"
    )

    assert response.status_code == 400
    (problem,) = response.json()["errors"]["model"]
    assert problem == "Not an allowed model; choose one of: gpt-4o, gpt-4o-mini."
    assert not AgentRun.objects.exists() and not Conversation.objects.exists()


def test_by_default_only_the_configured_model_is_allowed(library, auth_client, settings):
    response = auth_client.post(
        f"/api/folders/{library.folder.pk}/chat", {"message": W2_QUESTION, "model": "gpt-4o-mini"}, format="json"
    )

    assert settings.LLM_MODELS_ALLOWED == [settings.LLM_MODELS["answer"]] == ["gpt-4o"]
    assert response.status_code == 400 and "choose one of: gpt-4o." in response.json()["errors"]["model"][0]


def test_the_chosen_model_makes_every_call_of_the_run_and_is_recorded(library, sdk, wire_stub, auth_client, settings):
    chosen = CHEAPER[sdk]
    settings.LLM_MODELS_ALLOWED = [settings.LLM_MODELS["answer"], chosen]
    served = f"{chosen}-20250101"  # providers answer with the dated name of the model asked for
    query = "federal income tax withheld"
    wire_stub.reply_tool_calls(
        StubToolCall("call_r", "rewrite_query", {"original_query": "tax kept back", "feedback": "too vague"}),
        model=served,
    )
    wire_stub.reply_text(query, model=served)  # the rewrite's own call (the router role's)
    wire_stub.reply_text("Federal tax withheld was 12,300 dollars [1].", model=served)

    run_id, _ = ask_streamed(auth_client, library.folder, message=W2_QUESTION, agent_mode=True, model=chosen)

    assert [sent.body["model"] for sent in wire_stub.requests] == [chosen] * 3
    run = auth_client.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "completed" and run["model"] == chosen and run["metrics"]["model"] == served
    records = UsageRecord.objects.filter(run_id=run_id)
    assert [record.model for record in records] == [served] * 3
    price = settings.LLM_PRICES[chosen]
    each = Decimal(str((21 * price["input"] + 9 * price["output"]) / 1_000_000)).quantize(Decimal("1e-8"))
    assert {record.cost for record in records} == {each}  # priced as the chosen model, not the configured one


def test_without_a_model_the_configured_one_answers(library, sdk, wire_stub, auth_client, settings):
    settings.LLM_MODELS_ALLOWED = [settings.LLM_MODELS["answer"], CHEAPER[sdk]]
    wire_stub.reply_text("Federal tax withheld was 12,300 dollars [1].")

    run_id, _ = ask_streamed(auth_client, library.folder, message=W2_QUESTION)

    (sent,) = wire_stub.requests
    assert sent.body["model"] == settings.LLM_MODELS["answer"]
    assert AgentRun.objects.get(pk=run_id).model == ""


def test_a_regenerated_answer_uses_the_same_model(library, sdk, wire_stub, auth_client, settings, monkeypatch):
    chosen = CHEAPER[sdk]
    settings.LLM_MODELS_ALLOWED = [settings.LLM_MODELS["answer"], chosen]
    wire_stub.reply_text("First [1].")
    wire_stub.reply_text("Second [1].")
    run_id, _ = ask_streamed(auth_client, library.folder, message=W2_QUESTION, model=chosen)
    # The queued run executes as the worker would, once the request commits.
    monkeypatch.setattr("apps.chat.enqueue.execute_run", lambda run_id: run_execute(run_id=run_id))

    response = auth_client.post(f"/api/conversations/{AgentRun.objects.get(pk=run_id).conversation_id}/regenerate")

    assert response.status_code == 202, response.json()
    assert AgentRun.objects.get(pk=response.json()["run_id"]).model == chosen
    assert [sent.body["model"] for sent in wire_stub.requests] == [chosen, chosen]


def test_a_model_no_longer_allowed_when_the_run_executes_falls_back_to_the_configured_one(
    library, sdk, wire_stub, auth_client, settings, monkeypatch
):
    chosen = CHEAPER[sdk]
    settings.LLM_MODELS_ALLOWED = [settings.LLM_MODELS["answer"], chosen]
    queued: list[str] = []
    monkeypatch.setattr("apps.chat.enqueue.execute_run", queued.append)
    response = auth_client.post(
        f"/api/folders/{library.folder.pk}/chat", {"message": W2_QUESTION, "model": chosen}, format="json"
    )
    assert response.status_code == 202
    settings.LLM_MODELS_ALLOWED = [settings.LLM_MODELS["answer"]]  # narrowed while the run waited
    wire_stub.reply_text("Federal tax withheld was 12,300 dollars [1].")

    run_execute(run_id=queued[0])

    (sent,) = wire_stub.requests
    assert sent.body["model"] == settings.LLM_MODELS["answer"]


@pytest.fixture
def chosen_allowed(settings, monkeypatch) -> str:
    """gpt-4o-mini allowed here and in a worker started after this fixture (its environment)."""
    monkeypatch.setenv("LLM_MODELS_ALLOWED", "gpt-4o,gpt-4o-mini")
    settings.LLM_MODELS_ALLOWED = ["gpt-4o", "gpt-4o-mini"]
    return "gpt-4o-mini"


@pytest.mark.worker
def test_a_queued_run_on_a_real_worker_uses_the_chosen_model(
    library, worker_model, chosen_allowed, celery_worker_process, auth_client
):
    worker_model.reply_text("Federal tax withheld was 12,300 dollars [1].", model="gpt-4o-mini-2024-07-18")

    response = auth_client.post(
        f"/api/folders/{library.folder.pk}/chat", {"message": W2_QUESTION, "model": chosen_allowed}, format="json"
    )

    assert response.status_code == 202, response.json()
    run_url = f"/api/runs/{response.json()['run_id']}"
    wait_for(
        lambda: auth_client.get(run_url).json()["status"] not in ("queued", "running"),
        what="the worker to finish the run",
        interval=0.1,
    )
    run = auth_client.get(run_url).json()
    assert run["status"] == "completed" and run["model"] == "gpt-4o-mini"
    (sent,) = worker_model.requests
    assert sent.body["model"] == "gpt-4o-mini"
    (record,) = UsageRecord.objects.filter(run_id=run["id"])
    assert record.model == "gpt-4o-mini-2024-07-18"

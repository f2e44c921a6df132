"""Budgets: past a user's daily tokens or monthly cost, no model call is made and the answer comes
from the offline answerer with a notice saying so and when the budget resets."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from apps.chat.models import Message
from apps.chat.services import chat_start, run_execute
from apps.core.events import redis_client
from apps.llm.failures import REASONS, FailureKind
from apps.llm.models import UsageBudget, UsageRecord
from tests.support.questions import W2_QUESTION

pytestmark = pytest.mark.django_db

ANSWER = "Federal tax withheld was 12,300 dollars [1]."


def ask(folder):
    run = chat_start(user=folder.owner, folder=folder, text=W2_QUESTION)
    events: list = []
    run = run_execute(run_id=run.pk, on_event=events.append)
    return run, events


def spend(user, *, tokens: int = 0, cost: str = "0") -> None:
    UsageRecord.objects.create(
        user=user, provider="openai", model="gpt-4o", input_tokens=tokens, output_tokens=0, cost=Decimal(cost)
    )


def tomorrow() -> str:
    return (timezone.now().astimezone(dt.UTC) + dt.timedelta(days=1)).strftime("%Y-%m-%d 00:00 UTC")


def notices(events) -> list[dict]:
    return [event.data for event in events if event.type == "notice"]


def test_past_the_daily_tokens_the_answer_is_offline_and_no_call_is_made(library, sdk, wire_stub, settings):
    settings.LLM_DAILY_TOKENS_PER_USER = 1000
    spend(library.folder.owner, tokens=1000)
    wire_stub.reply_text(ANSWER)

    run, events = ask(library.folder)

    assert run.status == "completed", run.error
    assert wire_stub.requests == []
    (notice,) = notices(events)
    assert notice["failure"] == "budget"
    assert notice["message"].startswith("Your model usage budget (1,000 tokens a day) is used up")
    assert f"resets at {tomorrow()}" in notice["message"]
    answer = Message.objects.get(pk=run.answer_id)
    assert answer.metadata["notice"] == notice["message"]  # the line the chat page shows above the answer
    assert "12,300" in answer.content["text"] and answer.content["citations"]  # the offline answerer's, cited
    assert run.fallback_reason == REASONS[FailureKind.BUDGET]
    assert UsageRecord.objects.count() == 1  # the offline answer costs nothing


def test_the_counter_adds_each_call_and_refuses_once_spent(library, wire_stub, settings):
    wire_stub.configure(settings, "openai")
    settings.LLM_DAILY_TOKENS_PER_USER = 200
    owner = library.folder.owner
    wire_stub.reply_text(ANSWER, input_tokens=150, output_tokens=60)
    wire_stub.reply_text(ANSWER)

    first, _ = ask(library.folder)
    second, events = ask(library.folder)

    assert len(wire_stub.requests) == 1  # the first call spent 210 of 200: the second is never sent
    assert first.fallback_reason == "" and second.fallback_reason == REASONS[FailureKind.BUDGET]
    day = timezone.now().astimezone(dt.UTC).strftime("%Y-%m-%d")
    assert redis_client().get(f"llm:budget:tokens:{owner.pk}:{day}") == "210"
    assert notices(events)[0]["failure"] == "budget"


def test_a_missing_counter_is_seeded_from_the_records(library, wire_stub, settings):
    wire_stub.configure(settings, "openai")
    settings.LLM_DAILY_TOKENS_PER_USER = 500
    owner = library.folder.owner
    spend(owner, tokens=450)
    wire_stub.reply_text(ANSWER, input_tokens=40, output_tokens=20)
    wire_stub.reply_text(ANSWER)

    ask(library.folder)
    ask(library.folder)

    assert len(wire_stub.requests) == 1  # 450 recorded + 60 counted: past 500


def test_past_the_monthly_cost_the_answer_is_offline(library, wire_stub, settings):
    wire_stub.configure(settings, "openai")
    settings.LLM_MONTHLY_COST_PER_USER = 0.5
    spend(library.folder.owner, cost="0.75")

    _, events = ask(library.folder)

    assert wire_stub.requests == []
    (notice,) = notices(events)
    now = timezone.now().astimezone(dt.UTC)
    first_of_next = (now.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
    assert "($0.50 a month)" in notice["message"]
    assert f"resets at {first_of_next:%Y-%m-%d} 00:00 UTC" in notice["message"]


def test_a_budget_row_in_the_admin_raises_the_limit(library, wire_stub, settings, admin_client):
    wire_stub.configure(settings, "openai")
    settings.LLM_DAILY_TOKENS_PER_USER = 1000
    owner = library.folder.owner
    spend(owner, tokens=1000)
    wire_stub.reply_text(ANSWER)

    response = admin_client.post(
        "/admin/llm/usagebudget/add/", {"user": owner.pk, "daily_tokens": 5000, "monthly_cost": ""}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    run, events = ask(library.folder)

    assert len(wire_stub.requests) == 1 and notices(events) == []
    assert run.fallback_reason == ""


def test_a_budget_row_in_the_admin_lowers_the_limit(library, wire_stub, settings, admin_client):
    wire_stub.configure(settings, "openai")
    settings.LLM_DAILY_TOKENS_PER_USER = None
    owner = library.folder.owner
    spend(owner, tokens=10)

    response = admin_client.post("/admin/llm/usagebudget/add/", {"user": owner.pk, "daily_tokens": 10})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert UsageBudget.objects.get(user=owner).monthly_cost is None  # empty: the setting's (no limit)
    _, events = ask(library.folder)

    assert wire_stub.requests == []
    assert "(10 tokens a day)" in notices(events)[0]["message"]

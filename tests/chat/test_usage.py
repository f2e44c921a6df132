"""Usage accounting: every model call of a run is recorded with its tokens and cost (through the
real openai and anthropic SDKs against the wire stub), and `GET /api/usage` sums them."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from apps.chat.services import chat_start, run_execute
from apps.llm.models import ModelPrice, UsageRecord
from tests.support.metrics import METRICS_TOKEN, sample, scrape
from tests.support.questions import W2_QUESTION

pytestmark = pytest.mark.django_db

ANSWER = "Federal tax withheld was 12,300 dollars [1]."
PRICES = {"stub-model": {"input": 2.0, "output": 10.0, "cached": 0.5}}


def ask(folder, text: str = W2_QUESTION):
    run = chat_start(user=folder.owner, folder=folder, text=text)
    return run_execute(run_id=run.pk)


def test_a_chat_run_records_its_tokens_and_cost(library, sdk, wire_stub, settings):
    settings.LLM_PRICES = PRICES
    settings.METRICS_TOKEN = METRICS_TOKEN
    wire_stub.reply_text(ANSWER, input_tokens=200, output_tokens=11, cache_read_input_tokens=100)
    labels = {"provider": sdk, "model": "stub-model"}
    before = scrape()

    run = ask(library.folder)

    assert run.status == "completed", run.error
    assert len(wire_stub.requests) == 1
    (record,) = UsageRecord.objects.all()
    owner = library.folder.owner
    assert (record.user_id, record.folder_id, record.run_id) == (owner.pk, library.folder.pk, run.pk)
    assert (record.provider, record.model) == (sdk, "stub-model")
    # Both APIs' usage read alike: input counts the cached tokens, cached is their share.
    assert (record.input_tokens, record.output_tokens, record.cached_tokens) == (300, 11, 100)
    # 200 plain input tokens at $2, 100 cached at $0.50, 11 output at $10, per million.
    assert record.cost == Decimal("0.000400") + Decimal("0.000050") + Decimal("0.000110")
    # The same call counted for Prometheus, by provider, model and kind.
    after = scrape()
    for kind, tokens in (("input", 300), ("output", 11), ("cached", 100)):
        name = "folderchat_model_tokens_total"
        assert sample(after, name, **labels, kind=kind) - sample(before, name, **labels, kind=kind) == tokens
    spent = sample(after, "folderchat_model_cost_usd_total", **labels) - sample(
        before, "folderchat_model_cost_usd_total", **labels
    )
    assert spent == pytest.approx(float(record.cost))


def test_a_model_price_row_overrides_the_setting(library, wire_stub, settings):
    wire_stub.configure(settings, "openai")
    settings.LLM_PRICES = PRICES
    ModelPrice.objects.create(model="stub", input_per_million=1, output_per_million=3)  # also prices stub-model
    wire_stub.reply_text(ANSWER, input_tokens=1000, output_tokens=100)

    ask(library.folder)

    (record,) = UsageRecord.objects.all()
    assert record.cost == Decimal("0.001300")


def test_an_unpriced_model_is_recorded_at_no_cost(library, wire_stub, settings):
    wire_stub.configure(settings, "openai")
    settings.LLM_PRICES = {}
    wire_stub.reply_text(ANSWER, input_tokens=40, output_tokens=4)

    ask(library.folder)

    (record,) = UsageRecord.objects.all()
    assert (record.input_tokens, record.output_tokens, record.cost) == (40, 4, 0)


def test_the_offline_answerer_records_nothing(library, settings):
    settings.LLM_PROVIDER = "extractive"

    run = ask(library.folder)

    assert run.status == "completed"
    assert not UsageRecord.objects.exists()


def _record(user, *, days_ago: int, model: str = "gpt-4o", folder_id: int | None = 1, **fields) -> UsageRecord:
    fields = {"input_tokens": 100, "output_tokens": 10, "cached_tokens": 0, "cost": Decimal("0.5")} | fields
    at = timezone.now().replace(hour=12) - dt.timedelta(days=days_ago)
    return UsageRecord.objects.create(
        user=user, provider="openai", model=model, folder_id=folder_id, created_at=at, **fields
    )


@pytest.fixture
def spent(user, other_user):
    _record(user, days_ago=0, model="gpt-4o", folder_id=1, cached_tokens=40)
    _record(user, days_ago=0, model="gpt-4o-mini", folder_id=2, cost=Decimal("0.25"))
    _record(user, days_ago=2, model="gpt-4o", folder_id=None)
    _record(user, days_ago=45, model="gpt-4o")  # before the default window
    _record(other_user, days_ago=0, model="gpt-4o", input_tokens=999)


def _day(days_ago: int) -> str:
    return (timezone.now().astimezone(dt.UTC).replace(hour=12) - dt.timedelta(days=days_ago)).date().isoformat()


def test_usage_defaults_to_the_last_30_days_by_day(auth_client, user, spent):
    response = auth_client.get("/api/usage")

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["user_id"], body["group_by"], body["to"], body["from"]) == (user.pk, "day", _day(0), _day(29))
    assert body["totals"] == {"tokens": {"input": 300, "output": 30, "cached": 40}, "cost": "1.250000", "calls": 3}
    assert [(group["key"], group["calls"], group["cost"]) for group in body["groups"]] == [
        (_day(2), 1, "0.500000"),
        (_day(0), 2, "0.750000"),
    ]


@pytest.mark.parametrize(
    ("group_by", "expected"),
    [
        ("model", [("gpt-4o", 3, "1.500000"), ("gpt-4o-mini", 1, "0.250000")]),
        ("folder", [("1", 2, "1.000000"), ("2", 1, "0.250000"), (None, 1, "0.500000")]),
    ],
)
def test_usage_groups_by_model_and_folder(auth_client, spent, group_by, expected):
    response = auth_client.get("/api/usage", {"from": _day(60), "to": _day(0), "group_by": group_by})

    assert response.status_code == 200, response.content
    assert [(group["key"], group["calls"], group["cost"]) for group in response.json()["groups"]] == expected


def test_a_window_of_one_day(auth_client, spent):
    body = auth_client.get("/api/usage", {"from": _day(2), "to": _day(2)}).json()

    assert body["totals"]["calls"] == 1 and [group["key"] for group in body["groups"]] == [_day(2)]


@pytest.mark.parametrize(
    "query",
    [{"group_by": "week"}, {"from": "2025-02-01", "to": "2025-01-01"}, {"from": "yesterday"}, {"from": "2020-01-01"}],
)
def test_bad_filters_are_400_with_a_message(auth_client, query):
    response = auth_client.get("/api/usage", query)

    assert response.status_code == 400
    assert response.json()["detail"]


def test_staff_may_ask_for_another_users_usage(api_client, django_user_model, other_user, spent):
    staff = django_user_model.objects.create_user(username="operator", password="x", is_staff=True)
    api_client.force_authenticate(user=staff)

    body = api_client.get("/api/usage", {"user": other_user.pk}).json()

    assert body["user_id"] == other_user.pk and body["totals"]["tokens"]["input"] == 999
    assert api_client.get("/api/usage", {"user": 999_999}).status_code == 404


def test_others_may_not_ask_for_another_users_usage(auth_client, user, other_user, spent):
    for asked in (other_user.pk, user.pk):
        response = auth_client.get("/api/usage", {"user": asked})
        assert response.status_code == 403
        assert response.json()["detail"] == "Only staff may see another user's usage."


def test_the_admin_lists_totals_per_user_and_day_with_a_chart(admin_client, user, spent):
    response = admin_client.get("/admin/llm/usagerecord/")

    assert response.status_code == 200
    today = [
        (row["user"], row["calls"], row["total_tokens"], row["percent"]) for row in response.context["usage_rows"]
    ][:2]
    assert today == [("alice", 2, 220, 22), ("mallory", 1, 1009, 100)]  # bars scaled to the busiest user-day
    html = response.content.decode()
    assert 'id="usage-totals"' in html and 'class="usage-bar"' in html and "alice" in html

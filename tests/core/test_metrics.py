"""`GET /metrics`: who may read it, and that real requests, streams, runs, searches and a real
worker's indexing move the series it serves (parsed as Prometheus parses them)."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from asgiref.sync import sync_to_async
from django.test import Client
from prometheus_client.metrics import MetricWrapperBase

from apps.chat.models import RunStatus
from apps.chat.services import chat_start, run_execute
from apps.core import metrics
from apps.core.metrics import model_usage_observe
from apps.core.queues import ALL_QUEUES
from apps.core.sse import sse_stream
from apps.library.indexing import folder_index
from apps.library.models import Folder
from apps.llm.base import LLMError
from apps.llm.breaker import CircuitBreaker
from apps.search.selectors import chunk_search
from apps.search.types import SearchMode
from config.celery import app
from tests.support.chat_library import add_file, make_folder
from tests.support.files import write
from tests.support.metrics import METRICS_TOKEN, sample, scrape
from tests.support.servers import BASE_DIR
from workers.maintenance import ping

pytestmark = pytest.mark.django_db

REQUESTS = "folderchat_http_request_duration_seconds_count"


@pytest.fixture(autouse=True)
def scraper_token(settings):
    settings.METRICS_TOKEN = METRICS_TOKEN
    settings.METRICS_WORKERS_CACHE_SECONDS = 0  # workers started by a test are seen at once


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user(username="operator", password="operator-password", is_staff=True)


def _client(user=None, **headers: str) -> Client:
    client = Client(headers=headers)
    if user is not None:
        client.force_login(user)
    return client


def test_staff_and_the_scraper_token_get_through_anyone_else_is_refused(user, staff, settings):
    anonymous = _client().get("/metrics")
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"] == 'Bearer realm="metrics"'
    refused = _client(user).get("/metrics")
    assert refused.status_code == 403
    assert refused.json()["detail"] == "Only staff may read the metrics: they cover every user's work."
    assert _client(staff).get("/metrics").status_code == 200
    assert _client(Authorization=f"Bearer {METRICS_TOKEN}").get("/metrics").status_code == 200

    wrong = _client(Authorization=f"Bearer {METRICS_TOKEN}x").get("/metrics")
    assert wrong.status_code == 401 and wrong.json()["detail"] == "Invalid metrics token."
    # A wrong token is refused even on a staff session: the header says who is asking.
    assert _client(staff, Authorization="Bearer nope").get("/metrics").status_code == 401
    assert _client(Authorization=f"Bearer {METRICS_TOKEN}").post("/metrics").status_code == 405

    settings.METRICS_TOKEN = ""
    unset = _client(Authorization="Bearer ").get("/metrics")
    assert unset.status_code == 401 and "No METRICS_TOKEN is set" in unset.json()["detail"]
    assert _client(staff).get("/metrics").status_code == 200


def test_requests_are_timed_by_url_pattern_method_and_status_never_by_path(user):
    client = _client(user)
    before = scrape()
    assert client.get("/api/folders").status_code == 200
    assert client.get("/api/folders/987654321").status_code == 404
    assert client.get("/no/such/page/987654321").status_code == 404
    after = scrape()

    def moved(route: str, status: str) -> float:
        labels = {"route": route, "method": "GET", "status": status}
        return sample(after, REQUESTS, **labels) - sample(before, REQUESTS, **labels)

    assert moved("api/folders", "200") == 1
    assert moved("api/folders/<int:folder_id>", "404") == 1
    assert moved("<unmatched>", "404") == 1
    assert not [labels for _, labels in after if any("987654321" in value for _, value in labels)]
    ok = {"route": "api/folders", "method": "GET", "status": "200"}
    assert sample(after, "folderchat_http_request_duration_seconds_bucket", **ok, le="+Inf") == sample(
        after, REQUESTS, **ok
    )


def test_every_queue_has_its_depth_oldest_wait_and_workers():
    app.control.purge()
    try:
        ping.apply_async(args=["waiting"])  # nothing consumes `default` here
        samples = scrape()
    finally:
        app.control.purge()
    assert sample(samples, "folderchat_queue_metrics_up") == 1
    for queue in ALL_QUEUES:
        assert ("folderchat_queue_depth", frozenset({("queue", queue)})) in samples, queue
        assert ("folderchat_queue_workers", frozenset({("queue", queue)})) in samples, queue
    assert sample(samples, "folderchat_queue_depth", queue="default") == 1
    assert sample(samples, "folderchat_queue_depth", queue="indexing") == 0
    assert sample(samples, "folderchat_queue_oldest_wait_seconds", queue="default") >= 0


def test_an_open_event_stream_counts_until_it_closes(settings, user):
    settings.SSE_HEARTBEAT_SECONDS = 0.2
    folder = make_folder(user)
    open_streams = "folderchat_sse_streams_open"

    async def follow() -> tuple[float, float, float]:
        before = sample(await sync_to_async(scrape)(), open_streams, stream="folder")
        stream = sse_stream(channel=f"folder:{folder.pk}", unavailable={"message": "down"})
        assert await anext(stream) == ": ping\n\n"  # quiet: a heartbeat, the stream still open
        during = sample(await sync_to_async(scrape)(), open_streams, stream="folder")
        await stream.aclose()  # the client went away
        return before, during, sample(await sync_to_async(scrape)(), open_streams, stream="folder")

    before, during, after = asyncio.run(follow())
    assert (during - before, after) == (1, before)


def test_a_run_is_timed_from_the_question_with_its_first_text(user):
    folder = make_folder(user)
    add_file(folder=folder, path="w2.txt", chunks=[("Federal income tax withheld in 2024 was 12,300 dollars.", {})])
    before = scrape()
    run = chat_start(user=user, folder=folder, text="How much federal income tax was withheld?")
    run = run_execute(run_id=run.pk)
    after = scrape()

    assert run.status == RunStatus.COMPLETED
    done = ("folderchat_run_duration_seconds_count", {"mode": "standard", "status": "completed"})
    first = ("folderchat_run_time_to_first_text_seconds_count", {"mode": "standard"})
    for name, labels in (done, first):
        assert sample(after, name, **labels) - sample(before, name, **labels) == 1, name
    seconds = "folderchat_run_duration_seconds_sum"
    grew = sample(after, seconds, **done[1]) - sample(before, seconds, **done[1])
    assert 0 < grew < 60


def test_searches_are_timed_by_kind_and_mode(user):
    folder = make_folder(user)
    add_file(folder=folder, path="a.txt", chunks=[("Pancakes need flour and eggs.", {})])
    labels = {"kind": "chunks", "mode": "keyword"}
    before = sample(scrape(), "folderchat_search_duration_seconds_count", **labels)
    assert chunk_search(folder_id=folder.pk, query="pancakes", mode=SearchMode.KEYWORD)
    assert sample(scrape(), "folderchat_search_duration_seconds_count", **labels) - before == 1


def test_indexing_times_each_stage_once_per_folder_or_per_file(user, tmp_path):
    root = tmp_path / "notes"
    write(root, "lease.md", "# Lease\nThe lease renews on March 1 each year.")
    write(root, "invoice.txt", "Invoice INV-20935 from Northwind, due in 30 days.")
    write(root, "empty.txt", "   ")
    folder = Folder.objects.create(owner=user, source="local", external_id=str(root), name="notes")
    before = scrape()

    folder_index(folder_id=folder.pk, inline=True)
    after = scrape()

    def moved(stage: str, kind: str = "count") -> float:
        name = f"folderchat_indexing_stage_seconds_{kind}"
        return sample(after, name, stage=stage) - sample(before, name, stage=stage)

    # Three files claimed together (one group) and prepared, two written (the empty one is
    # skipped), the keyword statistics once the run settled, the backfill's one batch that found
    # nothing to fill.
    expected = {
        "list": 1,
        "reconcile": 1,
        "claim": 1,
        "prepare": 3,
        "write": 2,
        "progress": 3,
        "statistics": 1,
        "backfill": 1,
    }
    assert {stage: moved(stage) for stage in expected} == expected
    assert all(moved(stage, "sum") > 0 for stage in expected)


class _Outage(LLMError):
    """A model service that cannot be reached (counts toward the breaker)."""


def test_a_tripped_breaker_shows_until_a_call_succeeds(monkeypatch):
    monkeypatch.setattr("apps.llm.breaker.is_outage", lambda error: True)
    breaker = CircuitBreaker(name="openai https://key:secret@llm.example", failures=2, cooldown_seconds=30)
    labels = {"service": "openai https://llm.example"}  # the base URL's credentials never reach a label
    breaker.record_failure(_Outage("down"))
    assert sample(scrape(), "folderchat_llm_breaker_open", **labels) == 0
    breaker.record_failure(_Outage("down"))
    samples = scrape()
    assert sample(samples, "folderchat_llm_breaker_open", **labels) == 1
    assert not [labels for _, labels in samples if any("secret" in value for _, value in labels)]
    breaker.record_success()
    assert sample(scrape(), "folderchat_llm_breaker_open", **labels) == 0


def test_model_usage_counts_tokens_by_kind_and_cost():
    labels = {"provider": "anthropic", "model": "claude-test-metrics"}
    before = scrape()
    model_usage_observe(**labels, input_tokens=1200, output_tokens=300, cached_tokens=800, cost=0.0123)
    model_usage_observe(**labels, input_tokens=10, output_tokens=0, cost=None)
    after = scrape()

    def moved(name: str, **more: str) -> float:
        return sample(after, name, **labels, **more) - sample(before, name, **labels, **more)

    tokens = "folderchat_model_tokens_total"
    assert (moved(tokens, kind="input"), moved(tokens, kind="output"), moved(tokens, kind="cached")) == (1210, 300, 800)
    assert moved("folderchat_model_cost_usd_total") == pytest.approx(0.0123)


def test_the_grafana_dashboard_asks_only_for_metrics_that_exist():
    dashboard = json.loads((BASE_DIR / "deploy" / "grafana" / "folder-chat.json").read_text())
    asked = {
        re.sub(r"_(bucket|count|sum)$", "", name)
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"folderchat_\w+", target["expr"])
    }
    defined = {
        metric._name + ("_total" if metric._type == "counter" else "")
        for metric in vars(metrics).values()
        if isinstance(metric, MetricWrapperBase)
    }
    served = {name for name, _ in scrape() if name.startswith("folderchat_queue")}
    assert asked and asked <= defined | served, asked - defined - served

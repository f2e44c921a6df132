"""Evaluation runs on a real Celery worker: a set made through the API over a folder indexed for
real, run, its progress on the folder's event stream, its answers scored; then the folder made
worse (a folder excluded in its settings, synced by the worker) and run again: the run is flagged,
says which metrics dropped, shows in the metrics. With a model (the real OpenAI SDK against the
wire stub), the tokens and cost come from the usage records of the answers."""

from __future__ import annotations

import pytest
from django.db.models import Sum
from django.test import Client

from apps.core.events import events_after, folder_channel
from apps.evaluation.models import EvaluationRun
from apps.library.models import File
from apps.llm.models import UsageRecord
from tests.support.evaluation_folder import QUESTIONS, WORSE_EXCLUDE
from tests.support.metrics import METRICS_TOKEN, sample, scrape
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

RUN_SECONDS = 90


def run_and_wait(client, set_id: int) -> dict:
    response = client.post(f"/api/evaluations/{set_id}/runs", {"mode": "standard"}, format="json")
    assert response.status_code == 202, response.json()
    run_id = response.json()["run_id"]
    wait_for(
        lambda: EvaluationRun.objects.filter(pk=run_id, status__in=["done", "failed"]).exists(),
        timeout=RUN_SECONDS,
        what="the evaluation run to end",
    )
    return client.get(f"/api/evaluation-runs/{run_id}").json()


def test_a_run_on_the_worker_is_scored_then_a_worse_configuration_is_flagged(
    celery_worker_process, auth_client, folder, settings
):
    settings.METRICS_TOKEN = METRICS_TOKEN
    regressed_before = sample(scrape(), "folderchat_evaluation_runs_total", outcome="regressed")
    made = auth_client.post(
        f"/api/folders/{folder.pk}/evaluations", {"name": "Household checks", "questions": QUESTIONS}, format="json"
    )
    set_id = made.json()["id"]

    first = run_and_wait(auth_client, set_id)

    assert first["status"] == "done", first["error"]
    assert first["metrics"]["hit_at_5"] == 1.0 and first["metrics"]["facts_found"] == 1.0
    assert [result["hit_rank"] for result in first["results"]] == [1, 1, 1, 1]
    assert "two eggs" in first["results"][1]["answer"]
    assert first["regression"]["flagged"] is False and first["regression"]["compared_with"] is None
    events = [
        event for event in events_after(channel=folder_channel(folder.pk)) if event.type.startswith("evaluation.")
    ]
    assert [(event.type, event.data.get("done")) for event in events] == [
        ("evaluation.progress", 0),
        ("evaluation.progress", 1),
        ("evaluation.progress", 2),
        ("evaluation.progress", 3),
        ("evaluation.progress", 4),
        ("evaluation.finished", None),
    ]
    assert events[-1].data["run_id"] == first["id"] and events[-1].data["status"] == "done"
    assert events[-1].data["regressed"] is False and events[-1].data["set_id"] == set_id
    # The questions were asked as chats, and no conversation list shows them.
    assert auth_client.get("/api/conversations").json()["count"] == 0

    # A worse configuration: the folder's settings exclude the recipes, and the worker's sync
    # takes them out of the index.
    patterns = f"{folder.exclude_patterns}\n{WORSE_EXCLUDE}"
    assert (
        auth_client.patch(f"/api/folders/{folder.pk}", {"exclude_patterns": patterns}, format="json").status_code == 200
    )
    wait_for(
        lambda: not File.objects.filter(folder=folder, path__startswith=WORSE_EXCLUDE).exists(),
        timeout=RUN_SECONDS,
        what="the sync to drop the excluded files",
    )

    second = run_and_wait(auth_client, set_id)

    assert second["status"] == "done", second["error"]
    assert second["results"][1]["hit_rank"] is None and second["results"][1]["answered"] is False
    assert second["metrics"]["hit_at_5"] == 0.75 and second["metrics"]["answered_share"] == 0.75
    regression = second["regression"]
    assert regression["flagged"] is True and regression["compared_with"] == first["id"]
    assert set(regression["dropped"]) == {"hit_at_5", "mrr", "facts_found"}
    assert regression["dropped"]["hit_at_5"] == {"previous": 1.0, "now": 0.75, "drop": 0.25}
    # The history says what changed between the two runs.
    runs = auth_client.get(f"/api/evaluations/{set_id}").json()["runs"]
    assert [run["configuration"]["search"]["files_indexed"] for run in runs] == [3, 4]
    assert WORSE_EXCLUDE in runs[0]["configuration"]["search"]["exclude_patterns"]
    assert sample(scrape(), "folderchat_evaluation_runs_total", outcome="regressed") == regressed_before + 1

    # The admin lists the flagged run, says why in words, and filters by the flag.
    admin = Client()
    admin.force_login(type(folder.owner).objects.create_superuser(username="root", password="root-password"))
    flagged = admin.get("/admin/evaluation/evaluationrun/?regressed__exact=1").content.decode()
    assert "Regressed: hit_at_5 1.0 → 0.75" in flagged and "1 evaluation run" in flagged
    assert "Regressed:" not in admin.get("/admin/evaluation/evaluationrun/?regressed__exact=0").content.decode()


def test_tokens_and_cost_are_those_of_the_answers_usage_records(
    worker_model, celery_worker_process, auth_client, folder
):
    for _ in QUESTIONS:
        worker_model.reply_text("It is in the first passage [1].", input_tokens=200, output_tokens=25)
    made = auth_client.post(
        f"/api/folders/{folder.pk}/evaluations", {"name": "With a model", "questions": QUESTIONS}, format="json"
    )

    run = run_and_wait(auth_client, made.json()["id"])

    assert run["status"] == "done", run["error"]
    assert run["configuration"]["provider"] == "openai"
    assert [result["tokens"] for result in run["results"]] == [225] * 4
    recorded = UsageRecord.objects.filter(folder_id=folder.pk).aggregate(cost=Sum("cost"))["cost"]
    assert recorded > 0
    assert run["metrics"]["tokens"] == 900
    assert run["metrics"]["cost"] == pytest.approx(float(recorded))
    assert sum(result["cost"] for result in run["results"]) == pytest.approx(float(recorded))

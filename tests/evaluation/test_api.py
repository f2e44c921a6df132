"""The evaluation API in one process: making sets (and refusing bad ones, naming the missing file),
reading them with their runs, the run's results and metrics on known answers, the checks a run
request gets (mode and model as chat checks them, one run at a time), nightly on and off, delete,
and who may do what. Runs here execute in-process (`evaluation_run_execute`, what the worker
calls); tests/evaluation/test_worker_runs.py runs them on a real Celery worker."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.test import Client
from django.utils import timezone

from apps.chat.models import Conversation, ConversationKind
from apps.evaluation import enqueue
from apps.evaluation.execution import evaluation_run_execute
from apps.evaluation.models import EvaluationRun, EvaluationSet
from tests.support.evaluation_folder import QUESTIONS

pytestmark = pytest.mark.django_db


def create(client, folder, **overrides):
    return client.post(
        f"/api/folders/{folder.pk}/evaluations",
        {"name": "Household checks", "questions": QUESTIONS, **overrides},
        format="json",
    )


def made(client, folder) -> int:
    response = create(client, folder)
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def run_now(client, set_id: int, **body) -> EvaluationRun:
    """Start a run through the API, then execute it here as the worker would."""
    response = client.post(f"/api/evaluations/{set_id}/runs", body, format="json")
    assert response.status_code == 202, response.json()
    evaluation_run_execute(run_id=response.json()["run_id"])
    return EvaluationRun.objects.get(pk=response.json()["run_id"])


def test_a_set_is_made_with_its_questions_in_order(auth_client, folder):
    set_id = made(auth_client, folder)

    detail = auth_client.get(f"/api/evaluations/{set_id}").json()
    assert detail["name"] == "Household checks" and detail["folder_id"] == folder.pk
    assert [question["question"] for question in detail["questions"]] == [q["question"] for q in QUESTIONS]
    assert [question["position"] for question in detail["questions"]] == [1, 2, 3, 4]
    assert detail["questions"][0]["expected_files"] == ["insurance/home-policy.md"]
    assert detail["questions"][0]["expected_facts"] == ["June 1"]
    assert detail["nightly"] is False  # nightly runs are off unless someone turns them on
    assert detail["regression_margin"] == 0.05
    assert detail["runs"] == [] and detail["created_by"] == "alice"


@pytest.mark.parametrize(
    "overrides, said",
    [
        ({"name": "   "}, '"name"'),
        ({"questions": []}, '"questions"'),
        ({"questions": [{"question": "Renewal?"}]}, '"expected_files"'),
        ({"questions": [{"question": "  ", "expected_files": []}]}, "may not be blank"),
        (
            {
                "questions": [
                    QUESTIONS[0],
                    {"question": "Where is the lease?", "expected_files": ["housing/lease.pdf"]},
                ]
            },
            "Question 2 expects 'housing/lease.pdf', which is not a file of this folder.",
        ),
    ],
    ids=["blank name", "no question", "no expected files", "blank question", "missing file"],
)
def test_a_bad_set_is_refused_saying_why(auth_client, folder, overrides, said):
    response = create(auth_client, folder, **overrides)

    assert response.status_code == 400
    assert said in json.dumps(response.json()), response.json()
    assert not EvaluationSet.objects.exists()


def test_a_question_without_expected_files_is_one_the_folder_cannot_answer(auth_client, folder):
    response = create(auth_client, folder, questions=[{"question": "What is my dentist's name?", "expected_files": []}])

    assert response.status_code == 201
    run = run_now(auth_client, response.json()["id"])
    # Nothing to rank: the retrieval metrics are not measured, the answer says it found nothing.
    assert run.metrics["hit_at_5"] is None and run.metrics["mrr"] is None
    assert run.metrics["answered_share"] == 0.0


def test_a_run_answers_every_question_and_is_scored_on_the_known_answers(auth_client, folder):
    set_id = made(auth_client, folder)

    run = run_now(auth_client, set_id)

    body = auth_client.get(f"/api/evaluation-runs/{run.pk}").json()
    assert body["status"] == "done" and body["set_id"] == set_id and body["folder_id"] == folder.pk
    assert body["progress"] == {"done": 4, "total": 4}
    metrics = body["metrics"]
    # Every answer cites its file first and states its fact ("12300 dollars" against "12,300 dollars").
    assert {key: metrics[key] for key in ("hit_at_1", "hit_at_5", "mrr", "citation_precision", "facts_found")} == {
        "hit_at_1": 1.0,
        "hit_at_5": 1.0,
        "mrr": 1.0,
        "citation_precision": 1.0,
        "facts_found": 1.0,
    }
    assert metrics["answered_share"] == 1.0 and metrics["questions"] == 4
    assert metrics["tokens"] == 0 and metrics["cost"] == 0.0  # the offline answerer calls no model
    durations = sorted(result["duration_ms"] for result in body["results"])
    assert metrics["latency_p50"] == durations[1] and metrics["latency_p95"] == durations[3]
    first = body["results"][0]
    assert first["question"] == QUESTIONS[0]["question"]
    assert "June 1" in first["answer"] and first["cited_files"] == ["insurance/home-policy.md"]
    assert first["hit_rank"] == 1 and first["facts_found"] == ["June 1"] and first["answered"] is True
    assert body["results"][3]["facts_found"] == ["12300 dollars"]
    assert body["regression"] == {"flagged": False, "compared_with": None, "margin": 0.05, "dropped": {}}
    configuration = body["configuration"]
    assert configuration["mode"] == "standard" and configuration["provider"] == "extractive"
    assert configuration["model"] == "extractive"
    assert configuration["search"]["files_indexed"] == 4 and configuration["search"]["chat_search_k"] == 8


def test_the_questions_are_asked_in_conversations_no_sidebar_lists(auth_client, folder):
    run_now(auth_client, made(auth_client, folder))

    assert Conversation.objects.filter(folder=folder, kind=ConversationKind.EVALUATION).count() == 4
    assert auth_client.get("/api/conversations").json()["count"] == 0
    assert auth_client.get(f"/api/conversations?folder_id={folder.pk}").json()["count"] == 0


def test_the_list_shows_each_set_with_its_last_runs_metrics(auth_client, folder):
    never_run = made(auth_client, folder)
    run = run_now(auth_client, made(auth_client, folder))

    listed = auth_client.get(f"/api/folders/{folder.pk}/evaluations").json()

    assert listed["count"] == 2
    by_id = {item["id"]: item for item in listed["results"]}
    assert by_id[never_run]["last_run"] is None and by_id[never_run]["question_count"] == 4
    last = by_id[run.set_id]["last_run"]
    assert last["id"] == str(run.pk) and last["status"] == "done" and last["metrics"]["hit_at_5"] == 1.0


def test_the_detail_keeps_the_run_history_with_each_runs_configuration(auth_client, folder, settings):
    set_id = made(auth_client, folder)
    first = run_now(auth_client, set_id)
    settings.CHAT_SEARCH_K = 2
    second = run_now(auth_client, set_id)

    runs = auth_client.get(f"/api/evaluations/{set_id}").json()["runs"]

    assert [run["id"] for run in runs] == [str(second.pk), str(first.pk)]
    assert [run["configuration"]["search"]["chat_search_k"] for run in runs] == [2, 8]
    assert runs[0]["regression"]["compared_with"] == str(first.pk)


def test_a_run_is_queued_and_sent_to_the_worker_once_committed(
    auth_client, folder, django_capture_on_commit_callbacks, monkeypatch
):
    sent = []
    monkeypatch.setattr(enqueue, "task_send", lambda name, *, args: sent.append((name, args)))
    set_id = made(auth_client, folder)

    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(f"/api/evaluations/{set_id}/runs", {}, format="json")

    assert response.status_code == 202
    run_id = response.json()["run_id"]
    assert response.json()["status"] == "queued"
    assert sent == [("workers.evaluation.execute_evaluation_run", [run_id])]
    run = EvaluationRun.objects.get(pk=run_id)
    assert (run.mode, run.model, run.trigger, run.questions_total) == ("standard", "", "manual", 4)
    # One run of a set at a time.
    again = auth_client.post(f"/api/evaluations/{set_id}/runs", {}, format="json")
    assert again.status_code == 409 and "already being run" in again.json()["detail"]


def test_a_run_lost_past_its_time_limit_no_longer_blocks_the_next(auth_client, folder):
    set_id = made(auth_client, folder)
    lost = EvaluationRun.objects.create(
        set_id=set_id, status="running", started_at=timezone.now() - dt.timedelta(hours=2)
    )

    response = auth_client.post(f"/api/evaluations/{set_id}/runs", {}, format="json")

    assert response.status_code == 202
    lost.refresh_from_db()
    assert lost.status == "failed" and "time limit" in lost.error


def test_the_mode_and_model_are_checked_as_chat_checks_them(auth_client, folder, settings):
    set_id = made(auth_client, folder)
    settings.AGENT_MODE_ENABLED = False
    settings.LLM_MODELS_ALLOWED = ["gpt-4o", "gpt-4o-mini"]

    agent = auth_client.post(f"/api/evaluations/{set_id}/runs", {"mode": "agent"}, format="json")
    unknown = auth_client.post(f"/api/evaluations/{set_id}/runs", {"model": "gpt-9"}, format="json")
    allowed = auth_client.post(f"/api/evaluations/{set_id}/runs", {"model": "gpt-4o-mini"}, format="json")

    assert agent.status_code == 400 and "Agent mode is turned off" in json.dumps(agent.json())
    assert unknown.status_code == 400 and "gpt-4o, gpt-4o-mini" in json.dumps(unknown.json())
    assert allowed.status_code == 202
    assert EvaluationRun.objects.get(pk=allowed.json()["run_id"]).model == "gpt-4o-mini"


# Committed: the agent's tools search from threads of their own, on connections of their own.
@pytest.mark.django_db(transaction=True)
def test_an_agent_run_answers_in_agent_mode(auth_client, folder, monkeypatch):
    monkeypatch.setattr(enqueue, "task_send", lambda name, *, args: None)  # executed here instead

    run = run_now(auth_client, made(auth_client, folder), mode="agent")

    assert run.status == "done" and run.configuration["mode"] == "agent"
    assert run.results.filter(chat_run__mode="agent").count() == 4
    assert run.metrics["hit_at_5"] == 1.0


def test_nightly_and_the_margin_are_changed_by_patch(auth_client, folder):
    set_id = made(auth_client, folder)

    on = auth_client.patch(f"/api/evaluations/{set_id}", {"nightly": True, "regression_margin": 0.1}, format="json")
    off = auth_client.patch(f"/api/evaluations/{set_id}", {"nightly": False}, format="json")
    bad = auth_client.patch(f"/api/evaluations/{set_id}", {"regression_margin": 2}, format="json")

    assert on.status_code == 200 and on.json()["nightly"] is True and on.json()["regression_margin"] == 0.1
    assert off.json()["nightly"] is False and off.json()["regression_margin"] == 0.1
    assert bad.status_code == 400 and "regression_margin" in bad.json()["errors"]


def test_delete_removes_the_set_its_runs_and_their_conversations(auth_client, folder):
    run = run_now(auth_client, made(auth_client, folder))

    response = auth_client.delete(f"/api/evaluations/{run.set_id}")

    assert response.status_code == 204
    assert not EvaluationSet.objects.exists() and not EvaluationRun.objects.exists()
    assert not Conversation.objects.filter(kind=ConversationKind.EVALUATION).exists()


def test_a_set_being_run_is_not_deleted(auth_client, folder):
    set_id = made(auth_client, folder)
    auth_client.post(f"/api/evaluations/{set_id}/runs", {}, format="json")

    response = auth_client.delete(f"/api/evaluations/{set_id}")

    assert response.status_code == 409 and "still going" in response.json()["detail"]
    assert EvaluationSet.objects.filter(pk=set_id).exists()


def test_viewers_read_sets_and_results_but_change_nothing(auth_client, folder, member_client):
    run = run_now(auth_client, made(auth_client, folder))
    viewer = member_client("viewer")

    for url in (
        f"/api/folders/{folder.pk}/evaluations",
        f"/api/evaluations/{run.set_id}",
        f"/api/evaluation-runs/{run.pk}",
    ):
        assert viewer.get(url).status_code == 200, url
    refused = [
        viewer.post(f"/api/folders/{folder.pk}/evaluations", {"name": "x", "questions": QUESTIONS}, format="json"),
        viewer.patch(f"/api/evaluations/{run.set_id}", {"nightly": True}, format="json"),
        viewer.post(f"/api/evaluations/{run.set_id}/runs", {}, format="json"),
        viewer.delete(f"/api/evaluations/{run.set_id}"),
    ]
    assert [response.status_code for response in refused] == [403] * 4
    assert all("Only an editor of this folder" in response.json()["detail"] for response in refused)
    assert EvaluationSet.objects.get().nightly is False and EvaluationRun.objects.count() == 1


def test_editors_make_and_run_sets_as_themselves(folder, member_client):
    editor = member_client("editor")

    set_id = made(editor, folder)
    run = run_now(editor, set_id)

    assert run.created_by.username == "editor-person" and run.status == "done"
    assert set(Conversation.objects.filter(kind="eval").values_list("owner__username", flat=True)) == {"editor-person"}


def test_someone_without_a_role_finds_nothing(auth_client, folder, member_client):
    run = run_now(auth_client, made(auth_client, folder))
    stranger = member_client("stranger")

    responses = [
        stranger.get(f"/api/folders/{folder.pk}/evaluations"),
        stranger.post(f"/api/folders/{folder.pk}/evaluations", {"name": "x", "questions": QUESTIONS}, format="json"),
        stranger.get(f"/api/evaluations/{run.set_id}"),
        stranger.patch(f"/api/evaluations/{run.set_id}", {"nightly": True}, format="json"),
        stranger.post(f"/api/evaluations/{run.set_id}/runs", {}, format="json"),
        stranger.delete(f"/api/evaluations/{run.set_id}"),
        stranger.get(f"/api/evaluation-runs/{run.pk}"),
    ]

    assert [response.status_code for response in responses] == [404] * 7
    assert "Household checks" not in "".join(response.content.decode() for response in responses)


def test_the_admin_shows_sets_with_questions_and_runs_with_read_only_answers(auth_client, folder, django_user_model):
    run = run_now(auth_client, made(auth_client, folder))
    admin = Client()
    admin.force_login(django_user_model.objects.create_superuser(username="root", password="root-password"))

    set_page = admin.get(f"/admin/evaluation/evaluationset/{run.set_id}/change/")
    run_page = admin.get(f"/admin/evaluation/evaluationrun/{run.pk}/change/")

    assert set_page.status_code == 200 and QUESTIONS[1]["question"] in set_page.content.decode()
    assert run_page.status_code == 200
    page = run_page.content.decode()
    assert "Pancakes need two cups of flour, two eggs" in page  # an answer, shown not edited
    assert 'name="results-0-answer"' not in page and 'name="status"' not in page
    assert admin.get("/admin/evaluation/evaluationrun/add/").status_code == 403

"""The nightly schedule: one entry among every periodic task, installed into django-celery-beat,
and its task starts runs of the sets marked nightly only (none by default), in the mode and with
the model of each set's latest run, skipping a set still being run."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django_celery_beat.models import PeriodicTask

from apps.core.beat import BEAT_SCHEDULE
from apps.evaluation import enqueue
from apps.evaluation.models import EvaluationRun, EvaluationSet
from apps.library.models import FolderMembership
from workers.evaluation import run_nightly_sets

pytestmark = pytest.mark.django_db

TASK = "workers.evaluation.run_nightly_sets"


@pytest.fixture(autouse=True)
def _no_worker(monkeypatch):
    monkeypatch.setattr(enqueue, "task_send", lambda name, *, args: None)


def test_one_nightly_entry_is_installed_with_the_other_periodic_tasks():
    (entry,) = [entry for entry in BEAT_SCHEDULE if entry.task == TASK]
    assert entry.every_seconds == 24 * 3600
    assert run_nightly_sets.name == TASK

    call_command("install_beat_schedule", stdout=io.StringIO())

    task = PeriodicTask.objects.get(name=entry.name)
    assert task.task == TASK and task.interval.every == 24 * 3600 and task.interval.period == "seconds"


def test_no_set_runs_at_night_unless_it_is_marked(folder, user):
    EvaluationSet.objects.create(folder=folder, name="unmarked", created_by=user)

    assert run_nightly_sets() == 0
    assert not EvaluationRun.objects.exists()


def test_only_the_nightly_sets_are_run_as_their_latest_run_was(folder, user, settings):
    settings.LLM_MODELS_ALLOWED = ["gpt-4o", "gpt-4o-mini"]
    nightly = EvaluationSet.objects.create(folder=folder, name="nightly", created_by=user, nightly=True)
    EvaluationRun.objects.create(set=nightly, status="done", mode="agent", model="gpt-4o-mini", created_by=user)
    daytime = EvaluationSet.objects.create(folder=folder, name="by hand", created_by=user)
    busy = EvaluationSet.objects.create(folder=folder, name="busy", created_by=user, nightly=True)
    EvaluationRun.objects.create(set=busy, status="running", created_by=user)

    assert run_nightly_sets() == 1

    started = EvaluationRun.objects.get(set=nightly, status="queued")
    assert (started.trigger, started.mode, started.model) == ("nightly", "agent", "gpt-4o-mini")
    assert started.created_by == user
    assert not daytime.runs.exists() and busy.runs.count() == 1


def test_a_creator_who_may_no_longer_edit_is_replaced_by_the_folders_owner(folder, user, django_user_model):
    former = django_user_model.objects.create_user(username="former-editor")
    FolderMembership.objects.create(folder=folder, user=former, role="viewer")  # was an editor
    EvaluationSet.objects.create(folder=folder, name="theirs", created_by=former, nightly=True)

    run_nightly_sets()

    assert EvaluationRun.objects.get().created_by == user

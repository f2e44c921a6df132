"""The folder sync claim left by a worker that died mid-sync (see test_worker_faults for the real kill)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.library.models import Folder, IndexingJob, SyncLog
from apps.library.sync import _sync_claim, folder_sync

pytestmark = pytest.mark.django_db


def test_a_dead_syncs_claim_is_taken_back_by_its_redelivery_while_other_syncs_still_wait(user, tmp_path):
    (tmp_path / "a.txt").write_text("some text")
    folder = Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="f")
    # What a delivery killed mid-sync leaves behind: the claim, and its job still running.
    assert _sync_claim(folder_id=folder.pk, token="task-1", now=timezone.now()) is not None

    assert folder_sync(folder_id=folder.pk, task_id="task-2") is None
    log = folder_sync(folder_id=folder.pk, task_id="task-1")

    assert log is not None and log.added == 1 and SyncLog.objects.filter(folder=folder).count() == 1
    assert Folder.objects.get(pk=folder.pk).sync_started_at is None
    job = IndexingJob.objects.get(folder=folder, kind="sync")
    assert (job.celery_task_id, job.status, job.attempts) == ("task-1", "succeeded", 2)
    assert job.finished_at is not None


def test_a_finished_syncs_token_is_no_pass_to_a_claim_held_by_another(user, tmp_path):
    folder = Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="f")
    assert folder_sync(folder_id=folder.pk, task_id="task-1") is not None
    assert _sync_claim(folder_id=folder.pk, token="task-2", now=timezone.now()) is not None

    assert folder_sync(folder_id=folder.pk, task_id="task-1") is None  # a late duplicate delivery
    assert IndexingJob.objects.get(folder=folder, celery_task_id="task-1").status == "succeeded"

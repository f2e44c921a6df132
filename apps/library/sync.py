"""Keeping folders in step with their sources.

A sync claims its folder with a conditional UPDATE on ``sync_started_at`` (one sync per folder
at a time; a claim older than the task's time limit is presumed dead and may be re-taken),
runs the per-source sync function, queues indexing of what changed and writes a SyncLog. Its
IndexingJob (kind ``sync``) names the claim's holder, so a redelivered task takes its claim back.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import time
import uuid
from collections.abc import Callable

from django.db import transaction
from django.db.models import DateTimeField, DurationField, ExpressionWrapper, F, Q
from django.utils import timezone

from apps.core.stored_messages import stored_message_fields
from apps.library import enqueue
from apps.library.indexing import files_enqueue, folder_source_failed, reconcile_settle
from apps.library.models import Folder, FolderStatus, IndexingJob, JobKind, JobStatus, SyncLog
from apps.library.progress import FolderProgress, folder_counters_refresh
from apps.library.source_access import members_source_recheck
from apps.library.sources import SYNCERS, SourceError, SourceTransientError, SyncOutcome
from apps.library.sync_selectors import sync_claim_stale_before

logger = logging.getLogger(__name__)


def folder_sync(*, folder_id: int, task_id: str = "") -> SyncLog | None:
    """Sync one folder; None when it is already syncing elsewhere or has no sync function.

    ``task_id`` is the claim token: the same task delivered again after its worker died mid-sync
    takes the folder back at once, where any other sync waits until the claim is stale.
    """
    now = timezone.now()
    job_id = _sync_claim(folder_id=folder_id, token=task_id or uuid.uuid4().hex, now=now)
    if job_id is None:
        return None
    status = JobStatus.FAILED
    try:
        folder = Folder.objects.get(pk=folder_id)
        syncer = SYNCERS.get(folder.source)
        if syncer is None:
            logger.warning("no sync function for %s folders (folder %s)", folder.source, folder_id)
            return None
        log = _run(folder, syncer)
        status = JobStatus.FAILED if log.error else JobStatus.SUCCEEDED
        return log
    finally:
        # Only our own claim is released, never one that replaced it after going stale.
        Folder.objects.filter(pk=folder_id, sync_started_at=now).update(sync_started_at=None)
        IndexingJob.objects.filter(pk=job_id).update(status=status, finished_at=timezone.now())


def _sync_claim(*, folder_id: int, token: str, now: dt.datetime) -> int | None:
    """Take the folder's sync claim; the id of the job that records it as ``token``'s, or None."""
    free = Q(sync_started_at__isnull=True) | Q(sync_started_at__lt=sync_claim_stale_before(now=now))
    with transaction.atomic():
        jobs = IndexingJob.objects.filter(folder_id=folder_id, kind=JobKind.SYNC, celery_task_id=token)
        held_since = jobs.filter(status=JobStatus.RUNNING).values_list("started_at", flat=True).first()
        if held_since is not None:
            free |= Q(sync_started_at=held_since)
        if not Folder.objects.filter(free, pk=folder_id).update(sync_started_at=now):
            return None
        # The job's start is the claim's value: that is how a redelivery recognises its own claim.
        job, _ = IndexingJob.objects.get_or_create(folder_id=folder_id, kind=JobKind.SYNC, celery_task_id=token)
        IndexingJob.objects.filter(pk=job.pk).update(
            status=JobStatus.RUNNING, started_at=now, finished_at=None, attempts=F("attempts") + 1
        )
    return job.pk


def _run(folder: Folder, syncer: Callable[[Folder], SyncOutcome]) -> SyncLog:
    started = time.monotonic()
    try:
        outcome = syncer(folder)
    except SourceTransientError:
        raise
    except SourceError as exc:
        folder_source_failed(folder_id=folder.pk, error=exc)
        # Counts as an attempt: beat retries after the interval, not every minute.
        Folder.objects.filter(pk=folder.pk).update(last_synced_at=timezone.now())
        failed = SyncLog.objects.create(
            folder=folder,
            mode="full",
            duration_ms=_elapsed_ms(started),
            **stored_message_fields("error", exc.message, limit=2000),
        )
        FolderProgress(folder.pk).folder_synced(log=failed)
        return failed
    result = outcome.result
    now = timezone.now()
    with transaction.atomic():
        files_enqueue(folder_id=folder.pk, file_ids=result.to_index)
        log = SyncLog.objects.create(
            folder=folder,
            mode=outcome.mode,
            added=result.added,
            modified=result.modified,
            deleted=result.deleted,
            moved=result.moved,
            api_calls=outcome.api_calls,
            duration_ms=_elapsed_ms(started),
        )
        changes = {"last_synced_at": now, "last_error": "", "last_error_i18n": None}
        if outcome.mode == "full":
            changes["last_full_listing_at"] = now
        if outcome.cursor is not None:
            changes["sync_cursor"] = outcome.cursor
        if result.to_index or folder.status in {FolderStatus.ERROR, FolderStatus.PENDING}:
            # The counters refresh below turns it ready once nothing is left to index.
            changes["status"] = FolderStatus.INDEXING
        Folder.objects.filter(pk=folder.pk).update(**changes)
    reconcile_settle(folder_id=folder.pk, result=result)
    counts = folder_counters_refresh(folder_id=folder.pk)
    FolderProgress(folder.pk).folder_scanned(result=result, counts=counts)
    FolderProgress(folder.pk).folder_synced(log=log)
    members_source_recheck(folder=folder)
    return log


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def folders_sync_due_enqueue(*, now: dt.datetime | None = None) -> list[int]:
    """Queue ``sync_folder`` for folders past their interval; the claim still stops doubles."""
    now = now or timezone.now()
    interval = ExpressionWrapper(F("sync_interval_seconds") * dt.timedelta(seconds=1), output_field=DurationField())
    next_sync = ExpressionWrapper(F("last_synced_at") + interval, output_field=DateTimeField())
    due = list(
        Folder.objects.filter(source__in=list(SYNCERS))
        .exclude(status=FolderStatus.NEEDS_REAUTH)
        .filter(Q(sync_started_at__isnull=True) | Q(sync_started_at__lt=sync_claim_stale_before(now=now)))
        .alias(next_sync=next_sync)
        .filter(Q(last_synced_at__isnull=True) | Q(next_sync__lte=now))
        .values_list("pk", flat=True)
    )
    for folder_id in due:
        transaction.on_commit(functools.partial(enqueue.sync_folder, folder_id))
    return due

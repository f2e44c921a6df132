"""The steps of indexing a group's files around each file's preparation (file_prepare.py): the
group's claim, the write that swaps a file's chunks, the record of a failure, and the
bookkeeping once a file is done. ``indexing.files_index`` runs them in order.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.core import task_limits
from apps.core.metrics import file_outcome_observe, indexing_stage_timed
from apps.library.chunk_store import chunks_replace
from apps.library.file_prepare import Claimed, FileOutcome, claimed_lost
from apps.library.file_rows import SETTLED
from apps.library.jobs import IndexingJobFinishes, indexing_file_jobs_start, indexing_job_skip
from apps.library.models import File, FileStatus, Folder, JobStatus
from apps.library.parsing.digest import text_digest, text_preview
from apps.library.progress import FolderProgress, folder_counters_refresh_after_file
from apps.library.signals import file_indexed


@indexing_stage_timed("claim")
def files_claim(*, file_ids: Sequence[int], token: str) -> tuple[dict[int, Claimed], list[FileOutcome]]:
    """Claim the task's files at once: the claimed by id, and a no-op outcome for each file that
    another task holds or whose current content is settled. Files deleted meanwhile drop out.

    One short transaction for the group (a few statements per group, not per file: they were a
    quarter of a small file's indexing time). The rows are locked in id order, so two tasks that
    share files never deadlock, and each row's condition is checked again once locked.
    """
    folder_of = dict(File.objects.filter(pk__in=file_ids).values_list("pk", "folder_id"))
    if not folder_of:
        return {}, []
    jobs = indexing_file_jobs_start(token=token, folder_of=folder_of)
    now = timezone.now()
    stale = now - dt.timedelta(seconds=task_limits.INDEX_FILES.hard)
    free = ~Q(status=FileStatus.INDEXING) | Q(index_claim=token) | Q(index_started_at__lt=stale)
    with transaction.atomic():
        claimable = File.objects.filter(free, pk__in=list(folder_of)).exclude(SETTLED).order_by("pk")
        claimed_ids = list(claimable.select_for_update().values_list("pk", flat=True))
        File.objects.filter(pk__in=claimed_ids).update(
            status=FileStatus.INDEXING, index_claim=token, index_started_at=now
        )
    files = File.objects.select_related("folder").defer("embedding", "folder__sync_cursor").in_bulk(claimed_ids)
    # One Folder object for its files: what one file learns (the folder's language) the next sees.
    folders: dict[int, Folder] = {}
    for file in files.values():
        file.folder = folders.setdefault(file.folder_id, file.folder)
    claimed = {pk: Claimed(file=file, token=token, job_id=jobs[pk]) for pk, file in files.items()}
    others = File.objects.filter(pk__in=[pk for pk in folder_of if pk not in claimed])
    skipped = []
    for file_id, status, path in others.values_list("pk", "status", "path"):
        indexing_job_skip(job_id=jobs[file_id], file_status=status)
        skipped.append(FileOutcome(file_id=file_id, path=path, status=status, noop=True))
    return claimed, skipped


@indexing_stage_timed("write")
def file_write(claimed: Claimed, vectors: np.ndarray) -> FileOutcome:
    """One transaction: mark the file indexed (if still ours) and swap its chunks."""
    file = claimed.file
    file_vector = vectors.mean(axis=0)
    file_vector /= np.linalg.norm(file_vector) or 1.0
    try:
        with transaction.atomic():
            updated = File.objects.filter(pk=file.pk, status=FileStatus.INDEXING, index_claim=claimed.token).update(
                status=FileStatus.INDEXED,
                error="",
                error_i18n=None,
                mime_type=claimed.mime_type[:255],
                preview=text_preview(text=claimed.text),
                digest=text_digest(text=claimed.text),
                embedding=file_vector,
                indexed_checksum=file.checksum,
                indexed_at=timezone.now(),
                chunk_count=len(claimed.pieces),
                token_count=sum(piece.token_count for piece in claimed.pieces),
                index_claim="",
            )
            if not updated:
                raise _ClaimLost
            chunks_replace(file_id=file.pk, folder_id=file.folder_id, pieces=claimed.pieces, vectors=vectors)
            file_indexed.send(sender=File, file_id=file.pk, folder_id=file.folder_id, path=file.path)
    except _ClaimLost:
        return claimed_lost(claimed)
    return FileOutcome(file.pk, file.path, FileStatus.INDEXED, chunks=len(claimed.pieces))


class _ClaimLost(Exception):
    """Someone else took the file (stale lease, or the content changed under us)."""


def file_failed(*, claimed: Claimed, exc: Exception) -> FileOutcome:
    # Transient or unforeseen (a download or the embedder failed): recorded where operators look
    # before Celery retries or reports it. The last good chunks stay searchable until a retry
    # replaces them; only content that is known bad (a corrupt pdf) drops them.
    file = claimed.file
    error = f"{type(exc).__name__}: {exc}"[:4000]
    rows = File.objects.filter(pk=file.pk, status=FileStatus.INDEXING, index_claim=claimed.token)
    if not rows.update(status=FileStatus.FAILED, error=error, error_i18n=None, index_claim=""):
        return claimed_lost(claimed)
    return FileOutcome(file.pk, file.path, FileStatus.FAILED, error)


@indexing_stage_timed("progress")
def file_done(*, claimed: Claimed, outcome: FileOutcome, finishes: IndexingJobFinishes, more_in_task: bool) -> None:
    """``more_in_task``: this task still holds other files of the folder (so it is not done)."""
    status = JobStatus.FAILED if outcome.status == FileStatus.FAILED else JobStatus.SUCCEEDED
    finishes.add(job_id=claimed.job_id, status=status, error=outcome.error)
    if outcome.noop:
        return
    file_outcome_observe(outcome=outcome.status)
    file = claimed.file
    outcome.counts = folder_counters_refresh_after_file(folder_id=file.folder_id, files_left=more_in_task)
    FolderProgress(file.folder_id).file_finished(
        file_id=outcome.file_id, path=outcome.path, status=outcome.status, error=outcome.error, counts=outcome.counts
    )

"""Indexing: list a folder, reconcile its File rows (reconcile.py), and index each file.

A task's group of files is claimed together (conditional UPDATE); per file: read it from its
source, parse, chunk, embed in batches, then in one transaction replace its chunks (DELETE +
binary COPY) and mark it indexed (file_steps.py). Readers see the old chunks or the new ones,
never none or both. A file that cannot be indexed records why and the folder goes on.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.core import queues, task_limits
from apps.core.metrics import indexing_stage_timed
from apps.core.queues import QueueName
from apps.core.stored_messages import StoredMessage, stored_message_fields
from apps.library import enqueue
from apps.library.backfill import search_vectors_backfill
from apps.library.budget import FileBudgetExceeded
from apps.library.file_prepare import Claimed, FileOutcome, claimed_settle, file_prepare
from apps.library.file_steps import file_done, file_failed, file_write, files_claim
from apps.library.isolation import files_overtime
from apps.library.jobs import (
    SOURCE_RETRYING,
    TASK_LOST,
    IndexingJobFinishes,
    indexing_job_finish,
    indexing_job_start,
)
from apps.library.models import File, FileStatus, Folder, FolderStatus, IndexingJob, JobKind, JobStatus
from apps.library.pipeline import EmbeddingPipeline
from apps.library.progress import FolderProgress, folder_counters_refresh
from apps.library.quotas import QuotaInFlight
from apps.library.reconcile import ReconcileResult, folder_reconcile
from apps.library.signals import folder_chunks_changed
from apps.library.sources import SourceAuthError, SourceError, SourceTransientError, source_for
from apps.llm.usage_context import UsageContext

logger = logging.getLogger(__name__)

_MAX_GROUP_FILES = 100


# --- Folder runs --------------------------------------------------------------------------------


ProgressCallback = Callable[[FileOutcome], None]


def folder_index(
    *,
    folder_id: int,
    inline: bool = False,
    force: bool = False,
    on_progress: ProgressCallback | None = None,
    task_id: str = "",
) -> ReconcileResult | None:
    """List the folder, reconcile its files and index what changed.

    Queued (default): ``index_files`` tasks, each a group of files whose chunks fill the model's
    embedding batches. Inline: the same groups in this process, then the search-vector
    backfill, so the folder is fully searchable on return.
    ``force`` re-indexes unchanged files too (after changing the embedding model, say).
    ``task_id`` names the job: a redelivery after a worker died finishes the same job row.
    """
    folder = Folder.objects.filter(pk=folder_id).first()
    if folder is None:
        return None
    if force:
        File.objects.filter(folder=folder).update(indexed_checksum="")
    job_id = indexing_job_start(folder_id=folder_id, kind=JobKind.INDEX_FOLDER, token=task_id or uuid.uuid4().hex)
    Folder.objects.filter(pk=folder_id).update(status=FolderStatus.INDEXING)
    FolderProgress(folder_id).indexing_started(reason="index")
    try:
        source = source_for(folder=folder)
        with indexing_stage_timed("list"):
            entries = list(source.list_entries())
        result = folder_reconcile(folder=folder, entries=entries, problems=source.problems())
    except SourceTransientError:
        indexing_job_finish(job_id=job_id, status=JobStatus.FAILED, error=SOURCE_RETRYING)
        raise
    except SourceError as exc:
        folder_source_failed(folder_id=folder_id, error=exc)
        indexing_job_finish(job_id=job_id, status=JobStatus.FAILED, error=exc.message)
        return None
    now = timezone.now()
    Folder.objects.filter(pk=folder_id).update(
        last_synced_at=now, last_full_listing_at=now, last_error="", last_error_i18n=None
    )
    reconcile_settle(folder_id=folder_id, result=result)
    if inline:
        for group in file_groups(file_ids=result.to_index):
            try:
                files_index(file_ids=group, on_outcome=on_progress)
            except Exception:
                # Already recorded on the file; in-process, one bad file must not stop the folder.
                logger.exception("indexing files %s failed", group)
        search_vectors_backfill()
    else:
        files_enqueue(folder_id=folder_id, file_ids=result.to_index)
    counts = folder_counters_refresh(folder_id=folder_id)
    FolderProgress(folder_id).folder_scanned(result=result, counts=counts)
    indexing_job_finish(job_id=job_id, status=JobStatus.SUCCEEDED)
    return result


def folder_source_failed(*, folder_id: int, error: SourceError) -> None:
    status = FolderStatus.NEEDS_REAUTH if isinstance(error, SourceAuthError) else FolderStatus.ERROR
    fields = stored_message_fields("last_error", error.message, limit=2000)
    Folder.objects.filter(pk=folder_id).update(status=status, **fields)
    FolderProgress(folder_id).folder_failed(status=status, error=error.message)


def file_groups(*, file_ids: Sequence[int]) -> list[list[int]]:
    """Consecutive files whose chunks fill a couple of embedding batches together.

    Small files (notes, one page) embedded one by one give the model batches of a few chunks,
    which cost about twice the time per chunk on CPU (bench/ingest/ingest_local_model.py).
    """
    target = settings.EMBEDDING_BATCH_SIZE * 2
    sizes = dict(File.objects.filter(pk__in=file_ids).values_list("pk", "size"))
    groups: list[list[int]] = []
    current: list[int] = []
    estimate = 0
    for file_id in file_ids:
        current.append(file_id)
        # About 1 kB of text per chunk; binary formats (pdf, docx) carry more bytes per chunk.
        estimate += max(1, sizes.get(file_id, 0) // 2000)
        if estimate >= target or len(current) >= _MAX_GROUP_FILES:
            groups.append(current)
            current, estimate = [], 0
    return [*groups, current] if current else groups


@indexing_stage_timed("dispatch")
def files_enqueue(*, folder_id: int, file_ids: Sequence[int], alone: bool = False) -> None:
    """One ``index_files`` task per group of files (``file_groups``; ``alone``: one per file),
    sent once the job rows are committed. The task id is the group's claim token and names each
    file's job. A small run goes to a queue of its own and in a bigger one each group's priority
    falls with its position (``run_queue``, ``run_priority``): a new folder's files start while a
    big folder's are still queued."""
    if not file_ids:
        return
    grouped = [[file_id] for file_id in file_ids] if alone else file_groups(file_ids=file_ids)
    groups = {uuid.uuid4().hex: group for group in grouped}
    jobs = [
        IndexingJob(folder_id=folder_id, file_id=file_id, kind=JobKind.INDEX_FILE, celery_task_id=token)
        for token, group in groups.items()
        for file_id in group
    ]
    with transaction.atomic():
        IndexingJob.objects.bulk_create(jobs, batch_size=1000)

        def send() -> None:
            # Files re-queued alone ran out of time once: slow, so never on the small runs' slots.
            queue = QueueName.INDEXING.value if alone else queues.run_queue(len(groups))
            for position, (token, group) in enumerate(groups.items()):
                enqueue.index_files(group, task_id=token, queue=queue, priority=queues.run_priority(position))

        transaction.on_commit(send)


def files_stale_claims_requeue() -> int:
    """Beat: queue again files left ``indexing`` by a task that is surely gone (its claim is older
    than the task's hard time limit) and whose message never came back (a broker that lost it).

    A dead host's messages normally return within the visibility timeout (workers/leases.py) and
    take their claims back; this is the safety net. Each file goes back to pending with a
    conditional UPDATE before it is queued, so a second sweep never queues it twice.
    """
    stale = timezone.now() - dt.timedelta(seconds=task_limits.INDEX_FILES.hard)
    claims = File.objects.filter(status=FileStatus.INDEXING, index_started_at__lt=stale)
    by_folder: dict[int, list[int]] = {}
    for file_id, folder_id in claims.values_list("pk", "folder_id"):
        if claims.filter(pk=file_id).update(status=FileStatus.PENDING, index_claim="", index_started_at=None):
            by_folder.setdefault(folder_id, []).append(file_id)
    for folder_id, file_ids in by_folder.items():
        logger.warning("re-queueing %d files of folder %s whose indexing task is gone", len(file_ids), folder_id)
        IndexingJob.objects.filter(file_id__in=file_ids, kind=JobKind.INDEX_FILE, status=JobStatus.RUNNING).update(
            status=JobStatus.FAILED, finished_at=timezone.now(), **stored_message_fields("error", TASK_LOST)
        )
        files_enqueue(folder_id=folder_id, file_ids=file_ids)
    return sum(len(file_ids) for file_ids in by_folder.values())


# --- Files ----------------------------------------------------------------------------------


def file_index(*, file_id: int, task_id: str = "") -> FileOutcome | None:
    """Index one file; see ``files_index``. None when the file no longer exists."""
    outcomes = files_index(file_ids=[file_id], task_id=task_id)
    return outcomes[0] if outcomes else None


def files_index(
    *, file_ids: Sequence[int], task_id: str = "", on_outcome: ProgressCallback | None = None
) -> list[FileOutcome]:
    """Index each file exactly once; a no-op for files whose current content is indexed.

    The files are claimed together with a conditional UPDATE; ``task_id`` is the claim token, so
    a redelivered task takes its files back at once while any other claimant waits for the lease
    to go stale. (One by one made no difference to anyone watching: the loop below reads every
    file of the group within moments, the embedder being the slow part.) The files' chunks are
    embedded in groups of full batches while the next files are prepared, and each file whose
    vectors are ready gets its own short transaction that swaps its chunks. A file that fails
    records why and the others go on; the first unexpected error is raised at the end (Celery
    retries or reports it). A file over its time budget fails alone; when the task itself runs
    out of time, the files it has not finished are queued again one per
    task (``isolation.py``).
    """
    token = task_id or uuid.uuid4().hex
    outcomes: list[FileOutcome] = []
    jobs: dict[int, int] = {}
    finishes = IndexingJobFinishes()
    try:
        _files_index(
            file_ids=file_ids, token=token, outcomes=outcomes, jobs=jobs, finishes=finishes, on_outcome=on_outcome
        )
    except SoftTimeLimitExceeded:
        _connection_reset_if_cut()
        finished = {outcome.file_id for outcome in outcomes}
        unfinished = [file_id for file_id in file_ids if file_id not in finished]
        for folder_id, ids in files_overtime(
            file_ids=unfinished, token=token, job_ids=jobs, alone=len(file_ids) == 1
        ).items():
            files_enqueue(folder_id=folder_id, file_ids=ids, alone=True)
    finally:
        finishes.flush()
    return outcomes


def _connection_reset_if_cut() -> None:
    # The time limit arrives as a signal, possibly in the middle of a query: the connection is
    # then still "in progress" and refuses every later statement, so the re-queue gets a new one.
    if connection.connection is not None and not connection.in_atomic_block and not connection.is_usable():
        connection.close()


def _files_index(
    *,
    file_ids: Sequence[int],
    token: str,
    outcomes: list[FileOutcome],
    jobs: dict[int, int],
    finishes: IndexingJobFinishes,
    on_outcome: ProgressCallback | None,
) -> None:
    errors: list[Exception] = []
    in_flight = QuotaInFlight()
    group, skipped = files_claim(file_ids=file_ids, token=token)
    outcomes.extend(skipped)
    jobs.update((file_id, claimed.job_id) for file_id, claimed in group.items())
    # This task's files not done yet, by folder: while any is left, the folder is surely not done.
    unfinished = Counter(claimed.file.folder_id for claimed in group.values())

    def done(claimed: Claimed, outcome: FileOutcome) -> None:
        in_flight.discard(file_id=claimed.file.pk)
        unfinished[claimed.file.folder_id] -= 1
        more_in_task = unfinished[claimed.file.folder_id] > 0
        file_done(claimed=claimed, outcome=outcome, finishes=finishes, more_in_task=more_in_task)
        _run_settled(folder_id=claimed.file.folder_id, outcome=outcome)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    def failed(claimed: Claimed, exc: Exception) -> None:
        errors.append(exc)
        done(claimed, file_failed(claimed=claimed, exc=exc))

    def write(claimed: Claimed, vectors: np.ndarray | Exception, embed_seconds: float) -> None:
        if isinstance(vectors, Exception):
            failed(claimed, vectors)
            return
        try:
            if claimed.budget is not None:
                # The file's share of the embedding time it shared with its group.
                claimed.budget.charge(embed_seconds)
                claimed.budget.check(StoredMessage(gettext_noop("embedding")))
            done(claimed, file_write(claimed, vectors))
        except FileBudgetExceeded as exc:
            done(claimed, claimed_settle(claimed, FileStatus.FAILED, exc.message))
        except SoftTimeLimitExceeded:
            raise
        except Exception as exc:
            logger.exception("indexing %s failed", claimed.file.path)
            failed(claimed, exc)

    # Files are prepared and written on this thread while earlier ones embed (pipeline.py).
    with EmbeddingPipeline[Claimed](usage_of=_usage_of) as pipeline:
        for file_id in file_ids:
            claimed = group.get(file_id)
            if claimed is None:
                continue
            claimed.in_flight = in_flight
            FolderProgress(claimed.file.folder_id).file_started(file_id=file_id, path=claimed.file.path)
            try:
                outcome = file_prepare(claimed)
            except FileBudgetExceeded as exc:
                done(claimed, claimed_settle(claimed, FileStatus.FAILED, exc.message))
                continue
            except SoftTimeLimitExceeded:
                raise  # the task's time is up, not this file's fault: files_index re-queues
            except Exception as exc:
                logger.exception("indexing %s failed", claimed.file.path)
                failed(claimed, exc)
                continue
            if outcome is None:
                pieces = claimed.pieces
                pipeline.add(claimed, [piece.text for piece in pieces], tokens=sum(p.token_count for p in pieces))
            else:
                done(claimed, outcome)
            for ready, vectors, seconds in pipeline.finished():
                write(ready, vectors, seconds)
        for ready, vectors, seconds in pipeline.drain():
            write(ready, vectors, seconds)
    if errors:
        raise errors[0]


def _usage_of(claimed: Claimed) -> UsageContext:
    # A remote embedder's tokens go to the owner of the folder being indexed. A group's files share
    # a folder (files_enqueue), so its first file names it.
    return UsageContext(user_id=claimed.file.folder.owner_id, folder_id=claimed.file.folder_id)


def _run_settled(*, folder_id: int, outcome: FileOutcome) -> None:
    # Statistics over the folder's chunks (search's keyword statistics) read every chunk: announce
    # the change once its run settles, not per file. Deferred vectors: the backfill announces it.
    if outcome.counts is not None and outcome.counts.open == 0 and not settings.INDEX_DEFER_SEARCH_VECTOR:
        folder_chunks_changed.send(sender=File, folder_id=folder_id)


def reconcile_settle(*, folder_id: int, result: ReconcileResult) -> None:
    """After a listing: when nothing is left to index, deletions still changed the chunks."""
    if result.deleted and not result.to_index:
        folder_chunks_changed.send(sender=File, folder_id=folder_id)

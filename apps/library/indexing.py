"""Indexing: list a folder, reconcile its File rows (reconcile.py), and index each file.

Per file: claim it (conditional UPDATE), read it from its source, parse, chunk, embed in batches,
then in one transaction replace its chunks (DELETE + binary COPY) and mark it indexed. Readers
see the old chunks or the new ones, never none or both. A file that cannot be indexed records
why and the folder goes on.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable, Sequence

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.core import queues, task_limits
from apps.core.metrics import file_outcome_observe, indexing_stage_timed
from apps.core.queues import QueueName
from apps.core.stored_messages import StoredMessage, stored_message_fields
from apps.library import enqueue
from apps.library.backfill import search_vectors_backfill
from apps.library.budget import FileBudgetExceeded
from apps.library.chunk_store import chunks_replace
from apps.library.file_prepare import Claimed, FileOutcome, claimed_lost, claimed_settle, file_prepare
from apps.library.file_rows import SETTLED
from apps.library.isolation import files_overtime
from apps.library.jobs import SOURCE_RETRYING, TASK_LOST, indexing_job_finish, indexing_job_skip, indexing_job_start
from apps.library.models import File, FileStatus, Folder, FolderStatus, IndexingJob, JobKind, JobStatus
from apps.library.parsing.digest import text_digest, text_preview
from apps.library.pipeline import EmbeddingPipeline
from apps.library.progress import FolderProgress, folder_counters_refresh, folder_counters_refresh_after_file
from apps.library.quotas import QuotaInFlight
from apps.library.reconcile import ReconcileResult, folder_reconcile
from apps.library.signals import file_indexed, folder_chunks_changed
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

    Every file is claimed with a conditional UPDATE; ``task_id`` is the claim token, so a
    redelivered task takes its files back at once while any other claimant waits for the lease
    to go stale. The files' chunks are embedded in groups of full batches while the next files
    are prepared, and each file whose vectors are ready gets its own short transaction that swaps
    its chunks. A file that fails records why and the others go on; the first unexpected error
    is raised at the end (Celery retries or reports it). A file over its time budget fails alone;
    when the task itself runs out of time, the files it has not finished are queued again one per
    task (``isolation.py``).
    """
    token = task_id or uuid.uuid4().hex
    outcomes: list[FileOutcome] = []
    jobs: dict[int, int] = {}
    try:
        _files_index(file_ids=file_ids, token=token, outcomes=outcomes, jobs=jobs, on_outcome=on_outcome)
    except SoftTimeLimitExceeded:
        _connection_reset_if_cut()
        finished = {outcome.file_id for outcome in outcomes}
        unfinished = [file_id for file_id in file_ids if file_id not in finished]
        for folder_id, ids in files_overtime(
            file_ids=unfinished, token=token, job_ids=jobs, alone=len(file_ids) == 1
        ).items():
            files_enqueue(folder_id=folder_id, file_ids=ids, alone=True)
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
    on_outcome: ProgressCallback | None,
) -> None:
    errors: list[Exception] = []
    in_flight = QuotaInFlight()

    def done(claimed: Claimed, outcome: FileOutcome) -> None:
        in_flight.discard(file_id=claimed.file.pk)
        _file_done(claimed=claimed, outcome=outcome)
        _run_settled(folder_id=claimed.file.folder_id, outcome=outcome)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    def failed(claimed: Claimed, exc: Exception) -> None:
        errors.append(exc)
        done(claimed, _file_failed(claimed=claimed, exc=exc))

    def write(claimed: Claimed, vectors: np.ndarray | Exception, embed_seconds: float) -> None:
        if isinstance(vectors, Exception):
            failed(claimed, vectors)
            return
        try:
            if claimed.budget is not None:
                # The file's share of the embedding time it shared with its group.
                claimed.budget.charge(embed_seconds)
                claimed.budget.check(StoredMessage(gettext_noop("embedding")))
            done(claimed, _file_write(claimed, vectors))
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
            claimed, skipped = _file_claim(file_id=file_id, token=token)
            if skipped is not None:
                outcomes.append(skipped)
            if claimed is None:
                continue
            jobs[file_id] = claimed.job_id
            claimed.in_flight = in_flight
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


@indexing_stage_timed("claim")
def _file_claim(*, file_id: int, token: str) -> tuple[Claimed | None, FileOutcome | None]:
    row = File.objects.filter(pk=file_id).values("folder_id", "path").first()
    if row is None:
        return None, None
    job_id = indexing_job_start(file_id=file_id, folder_id=row["folder_id"], token=token)
    now = timezone.now()
    stale = now - dt.timedelta(seconds=task_limits.INDEX_FILES.hard)
    free = ~Q(status=FileStatus.INDEXING) | Q(index_claim=token) | Q(index_started_at__lt=stale)
    claimed = (
        File.objects.filter(free, pk=file_id)
        .exclude(SETTLED)
        .update(status=FileStatus.INDEXING, index_claim=token, index_started_at=now)
    )
    if not claimed:
        status = File.objects.filter(pk=file_id).values_list("status", flat=True).first() or FileStatus.PENDING
        indexing_job_skip(job_id=job_id, file_status=status)
        return None, FileOutcome(file_id=file_id, path=row["path"], status=status, noop=True)
    FolderProgress(row["folder_id"]).file_started(file_id=file_id, path=row["path"])
    file = File.objects.select_related("folder").defer("embedding", "folder__sync_cursor").get(pk=file_id)
    return Claimed(file=file, token=token, job_id=job_id), None


@indexing_stage_timed("write")
def _file_write(claimed: Claimed, vectors: np.ndarray) -> FileOutcome:
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


def _file_failed(*, claimed: Claimed, exc: Exception) -> FileOutcome:
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
def _file_done(*, claimed: Claimed, outcome: FileOutcome) -> None:
    status = JobStatus.FAILED if outcome.status == FileStatus.FAILED else JobStatus.SUCCEEDED
    indexing_job_finish(job_id=claimed.job_id, status=status, error=outcome.error)
    if outcome.noop:
        return
    file_outcome_observe(outcome=outcome.status)
    file = claimed.file
    outcome.counts = folder_counters_refresh_after_file(folder_id=file.folder_id)
    FolderProgress(file.folder_id).file_finished(
        file_id=outcome.file_id, path=outcome.path, status=outcome.status, error=outcome.error, counts=outcome.counts
    )


def _run_settled(*, folder_id: int, outcome: FileOutcome) -> None:
    # Statistics over the folder's chunks (search's keyword statistics) read every chunk: announce
    # the change once its run settles, not per file. Deferred vectors: the backfill announces it.
    if outcome.counts is not None and outcome.counts.open == 0 and not settings.INDEX_DEFER_SEARCH_VECTOR:
        folder_chunks_changed.send(sender=File, folder_id=folder_id)


def reconcile_settle(*, folder_id: int, result: ReconcileResult) -> None:
    """After a listing: when nothing is left to index, deletions still changed the chunks."""
    if result.deleted and not result.to_index:
        folder_chunks_changed.send(sender=File, folder_id=folder_id)

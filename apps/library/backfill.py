"""Fill chunk search vectors that bulk writes left NULL, in short batches; recompute a folder's
after its language changed (``search_vectors_recompute``).

Each batch is its own transaction that takes its rows with ``FOR UPDATE SKIP LOCKED``: two
workers take different rows and never wait on each other. The batch size adapts so one batch
stays near ``BACKFILL_BATCH_TARGET_SECONDS`` (an update rewrites the row into every index,
HNSW included, so rows/s varies a lot with the table).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction

from apps.core.events import redis_client
from apps.core.metrics import indexing_stage_timed
from apps.library import enqueue
from apps.library.models import File
from apps.library.signals import folder_chunks_changed

_BATCH = """
WITH batch AS (
    SELECT id, folder_id FROM library_chunk WHERE search_vector IS NULL ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED
)
UPDATE library_chunk AS chunk
SET search_vector = to_tsvector(library_folder_regconfig(chunk.folder_id), chunk.text)
FROM batch WHERE chunk.folder_id = batch.folder_id AND chunk.id = batch.id
RETURNING chunk.id, chunk.folder_id
"""
# A folder's chunks after ``after_id``, in id order, under the folder's language now. Rows a writer
# holds are skipped: it is replacing them, and its trigger reads the language too.
_RECOMPUTE_BATCH = """
WITH batch AS (
    SELECT id FROM library_chunk WHERE folder_id = %(folder_id)s AND id > %(after_id)s
    ORDER BY id LIMIT %(size)s FOR UPDATE SKIP LOCKED
)
UPDATE library_chunk AS chunk
SET search_vector = to_tsvector(library_folder_regconfig(chunk.folder_id), chunk.text)
FROM batch WHERE chunk.folder_id = %(folder_id)s AND chunk.id = batch.id
RETURNING chunk.id
"""
# Touching the name fires the file trigger, which reads the language (library/0011).
_RECOMPUTE_FILES = "UPDATE library_file SET name = name WHERE folder_id = %(folder_id)s"
_MIN_BATCH = 10
# Set while a backfill is queued and not yet started: one queued task serves every writer.
_QUEUED_KEY = "library:backfill:queued"
_QUEUED_TTL_SECONDS = 600


@dataclass
class BackfillResult:
    rows: int = 0
    batches: int = 0
    longest_batch_seconds: float = 0.0
    # True when the time budget ran out with rows possibly left.
    remaining: bool = False
    folder_ids: set[int] = field(default_factory=set)


@indexing_stage_timed("backfill")
def search_vectors_backfill_batch(*, batch_size: int) -> list[tuple[int, int]]:
    """One short transaction: fill up to ``batch_size`` NULL vectors; returns (chunk id, folder id)
    of each row filled."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_BATCH, [batch_size])
        return [(chunk_id, folder_id) for chunk_id, folder_id in cursor.fetchall()]


def search_vectors_backfill(*, max_seconds: float | None = None, batch_size: int | None = None) -> BackfillResult:
    """Batches until no NULL is left (or the time budget is spent)."""
    redis_client().delete(_QUEUED_KEY)  # writers committing from now on queue a new run
    largest = batch_size or settings.BACKFILL_BATCH_SIZE
    target = settings.BACKFILL_BATCH_TARGET_SECONDS
    # Start small and double while fast: the first batch must not be the one that runs long.
    size = min(largest, _MIN_BATCH)
    result = BackfillResult()
    started = time.monotonic()
    while True:
        batch_started = time.monotonic()
        filled = search_vectors_backfill_batch(batch_size=size)
        elapsed = time.monotonic() - batch_started
        if not filled:
            break
        result.folder_ids.update(folder_id for _, folder_id in filled)
        result.rows += len(filled)
        result.batches += 1
        result.longest_batch_seconds = max(result.longest_batch_seconds, elapsed)
        if elapsed > target:
            size = max(_MIN_BATCH, int(size * target / elapsed))
        elif elapsed < target / 2:
            size = min(largest, size * 2)
        if max_seconds is not None and time.monotonic() - started > max_seconds:
            result.remaining = True
            break
    # The keyword statistics count only filled vectors.
    for folder_id in sorted(result.folder_ids):
        folder_chunks_changed.send(sender=File, folder_id=folder_id)
    return result


@dataclass
class RecomputeResult:
    rows: int = 0
    # The last chunk id done when the time budget ran out (go on after it); None when finished.
    resume_after: int | None = None


def search_vectors_recompute(*, folder_id: int, after_id: int = 0, max_seconds: float | None = None) -> RecomputeResult:
    """The folder's chunk (after ``after_id``) and file keyword vectors again, under its language
    now: in short batches, so searches go on meanwhile, each chunk matching under one language or
    the other. The keyword statistics are refreshed at the end."""
    target = settings.BACKFILL_BATCH_TARGET_SECONDS
    size = _MIN_BATCH
    result = RecomputeResult()
    started = time.monotonic()
    if after_id == 0:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_RECOMPUTE_FILES, {"folder_id": folder_id})
    while True:
        batch_started = time.monotonic()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_RECOMPUTE_BATCH, {"folder_id": folder_id, "after_id": after_id, "size": size})
            ids = [row[0] for row in cursor.fetchall()]
        if not ids:
            break
        elapsed = time.monotonic() - batch_started
        result.rows += len(ids)
        after_id = max(ids)
        if elapsed > target:
            size = max(_MIN_BATCH, int(size * target / elapsed))
        elif elapsed < target / 2:
            size = min(settings.BACKFILL_BATCH_SIZE, size * 2)
        if max_seconds is not None and time.monotonic() - started > max_seconds:
            result.resume_after = after_id
            return result
    folder_chunks_changed.send(sender=File, folder_id=folder_id)
    return result


def search_vectors_backfill_enqueue() -> None:
    """Queue a backfill once the current transaction commits, unless one is already queued."""

    def send() -> None:
        if redis_client().set(_QUEUED_KEY, "1", nx=True, ex=_QUEUED_TTL_SECONDS):
            enqueue.backfill_search_vectors()

    transaction.on_commit(send)

"""Celery tasks for the backfill queue: thin wrappers that load by id and call a service."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from apps.core import task_limits
from workers.options import retrying

# Leaves the queue to other work between runs; a run with rows left queues the next one.
_RUN_SECONDS = 120


@shared_task(
    name="workers.backfill.backfill_search_vectors",
    **retrying(OperationalError),
    **task_limits.BACKFILL.options(),
)
def backfill_search_vectors() -> int:
    from apps.library.backfill import search_vectors_backfill

    result = search_vectors_backfill(max_seconds=_RUN_SECONDS)
    if result.remaining:
        backfill_search_vectors.delay()
    return result.rows


@shared_task(
    name="workers.backfill.reindex_folder_keywords",
    **retrying(OperationalError),
    **task_limits.BACKFILL.options(),
)
def reindex_folder_keywords(folder_id: int, after_id: int = 0) -> int:
    """A folder's keyword vectors under its language (it changed); a run out of time queues the rest."""
    from apps.library.backfill import search_vectors_recompute

    result = search_vectors_recompute(folder_id=folder_id, after_id=after_id, max_seconds=_RUN_SECONDS)
    if result.resume_after is not None:
        reindex_folder_keywords.delay(folder_id, result.resume_after)
    return result.rows

"""Celery tasks for the organize queue: thin wrappers that load by id and call a service."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from apps.core import task_limits
from workers.options import RELIABLE, retrying


# Idempotent: a redelivered task finds the pending suggestion the first delivery wrote and stops.
@shared_task(
    name="workers.organize.suggest_organization",
    **retrying(OperationalError, InterfaceError, max_retries=3),
    **task_limits.ORGANIZE_FILE.options(),
)
def suggest_organization(file_id: int) -> str:
    """Queued when a file under ``inbox/`` has its digest (and again when it changes)."""
    from apps.organize.services import file_suggest_auto

    outcome = file_suggest_auto(file_id=file_id)
    if outcome.suggestion is not None and not outcome.skipped:
        return f"suggested {outcome.suggestion.target_folder} for {outcome.path}"
    return f"no suggestion for {outcome.path or file_id}: {outcome.skipped}"


@shared_task(name="workers.organize.expire_suggestions", **RELIABLE, **task_limits.BEAT_SWEEP.options())
def expire_suggestions() -> int:
    from apps.organize.decisions import suggestions_expire

    return suggestions_expire()

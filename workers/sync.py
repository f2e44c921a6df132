"""Celery tasks for the sync queue: thin wrappers that load by id and call a service."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import OperationalError

from apps.core import task_limits
from apps.library.sources import SourceTransientError
from workers.options import RELIABLE, retrying


@shared_task(
    bind=True,
    name="workers.sync.sync_folder",
    **retrying(SourceTransientError, OperationalError),
    **task_limits.SYNC_FOLDER.options(),
)
def sync_folder(self: Any, folder_id: int) -> None:
    from apps.library.sync import folder_sync

    # The task id is the folder's claim token: a redelivery of this message takes the folder back.
    folder_sync(folder_id=folder_id, task_id=self.request.id or "")


@shared_task(name="workers.sync.sync_due_folders", **RELIABLE, **task_limits.BEAT_SWEEP.options())
def sync_due_folders() -> int:
    from apps.library.sync import folders_sync_due_enqueue

    return len(folders_sync_due_enqueue())

"""Celery tasks for the indexing queue: thin wrappers that load by id and call a service."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import OperationalError

from apps.core import task_limits
from apps.library.sources import SourceTransientError
from workers.options import RELIABLE, retrying

_RETRIED = retrying(SourceTransientError, OperationalError)


@shared_task(bind=True, name="workers.indexing.index_folder", **_RETRIED, **task_limits.INDEX_FOLDER.options())
def index_folder(self: Any, folder_id: int) -> None:
    from apps.library.indexing import folder_index

    folder_index(folder_id=folder_id, task_id=self.request.id or "")


@shared_task(bind=True, name="workers.indexing.index_files", **_RETRIED, **task_limits.INDEX_FILES.options())
def index_files(self: Any, file_ids: list[int]) -> None:
    from apps.library.indexing import files_index

    # The task id is the files' claim token: a redelivery of this message takes them back.
    files_index(file_ids=file_ids, task_id=self.request.id or "")


@shared_task(name="workers.indexing.requeue_stale_claims", **RELIABLE, **task_limits.BEAT_SWEEP.options())
def requeue_stale_claims() -> int:
    from apps.library.indexing import files_stale_claims_requeue

    return files_stale_claims_requeue()

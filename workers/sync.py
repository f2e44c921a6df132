"""Celery tasks for the sync queue: thin wrappers that load by id and call a service."""

from __future__ import annotations

from celery import shared_task

from workers.options import RELIABLE


@shared_task(name="workers.sync.sync_folder", **RELIABLE, time_limit=1800, soft_time_limit=1750)
def sync_folder(folder_id: int) -> None:
    from apps.library.sync import folder_sync

    folder_sync(folder_id=folder_id)

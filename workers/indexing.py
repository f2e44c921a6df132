"""Celery tasks for the indexing queue: thin wrappers that load by id and call a service."""

from __future__ import annotations

from celery import shared_task

from workers.options import RELIABLE


@shared_task(name="workers.indexing.index_folder", **RELIABLE, time_limit=1800, soft_time_limit=1750)
def index_folder(folder_id: int) -> None:
    from apps.library.indexing import folder_index

    folder_index(folder_id=folder_id)


@shared_task(name="workers.indexing.index_file", **RELIABLE, time_limit=900, soft_time_limit=870)
def index_file(file_id: int) -> None:
    from apps.library.indexing import file_index

    file_index(file_id=file_id)

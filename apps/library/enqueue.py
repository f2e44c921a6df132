"""The library's tasks, sent by name (``apps/core/enqueue.py`` says why apps never import workers/).

Each function queues its task at once: callers wrap it in ``transaction.on_commit`` so the task
never sees rows that were not committed. Callers import the module (``from apps.library import
enqueue``) and call ``enqueue.sync_folder(...)``, so a test can put one send aside.
"""

from __future__ import annotations

from apps.core.enqueue import task_send


def index_folder(folder_id: int) -> None:
    task_send("workers.indexing.index_folder", args=[folder_id])


def index_files(file_ids: list[int], *, task_id: str, queue: str, priority: int) -> None:
    """``task_id`` is the group's claim token; ``queue`` and ``priority`` place it among the runs
    (``apps/core/queues.py``)."""
    task_send("workers.indexing.index_files", args=[file_ids], task_id=task_id, queue=queue, priority=priority)


def sync_folder(folder_id: int) -> None:
    task_send("workers.sync.sync_folder", args=[folder_id])


def reindex_folder_keywords(folder_id: int) -> None:
    task_send("workers.backfill.reindex_folder_keywords", args=[folder_id])


def backfill_search_vectors() -> None:
    task_send("workers.backfill.backfill_search_vectors")

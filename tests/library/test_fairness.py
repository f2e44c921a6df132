"""Fairness across folders: a folder queued behind a big one is not served after all of it.

The folders' groups are queued before a real worker starts, the big folder's first, as when a
folder is added while a big one indexes. A small run (``SMALL_RUN_GROUPS``) has a queue of its
own; in the shared queue, the worker takes each run's early groups ahead of a long run's later
ones (``apps.core.queues.run_priority``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from apps.core.queues import QueueName, run_priority
from apps.library.indexing import folder_index
from apps.library.models import File, Folder
from tests.support.files import write
from tests.support.servers import BASE_DIR, start_celery_worker, test_database_env
from tests.support.waiting import wait_for


@pytest.fixture
def make_notes_folder(transactional_db, tmp_path, settings, django_user_model):
    # Two tiny files per index_files task: enough tasks to see the order a worker takes them in.
    settings.EMBEDDING_BATCH_SIZE = 1
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path)]

    def make(name: str, files: int) -> Folder:
        for n in range(files):
            write(tmp_path / name, f"note-{n:02}.md", f"# {name} {n}\n\nA note of the {name} folder, number {n}.")
        owner = django_user_model.objects.create_user(username=f"owner-of-{name}")
        folder = Folder.objects.create(owner=owner, source="local", external_id=str(tmp_path / name), name=name)
        folder_index(folder_id=folder.pk)  # listed here, its groups queued
        return folder

    return make


@contextmanager
def worker_on(queue: QueueName, settings, tmp_path) -> Iterator[None]:
    env = test_database_env(EMBEDDING_PROVIDER=settings.EMBEDDING_PROVIDER, LOCAL_FOLDER_ROOTS=str(tmp_path))
    log_path = BASE_DIR / "var" / f"test-fairness-worker-{time.monotonic_ns()}.log"
    with start_celery_worker(env=env, queues=[queue.value], log_path=log_path, name="fairness"):
        yield


def wait_indexed(folder: Folder) -> None:
    wait_for(
        lambda: not File.objects.filter(folder=folder).exclude(status="indexed").exists(),
        what=f"every file of {folder.name} indexed",
        timeout=60,
        interval=0.2,
    )


def test_a_folder_queued_after_a_big_one_is_served_among_its_first_groups(make_notes_folder, settings, tmp_path):
    big = make_notes_folder("big", 12)  # 6 tasks
    mid = make_notes_folder("mid", 6)  # 3 tasks: more than a small run, so the same queue

    with worker_on(QueueName.INDEXING, settings, tmp_path):
        wait_indexed(big)
        wait_indexed(mid)

    order = list(File.objects.order_by("indexed_at").values_list("folder_id", flat=True))
    mid_done = max(index for index, folder_id in enumerate(order) if folder_id == mid.pk)
    # First come, first served would index all 12 big files first. By priority the worker takes
    # big 0, mid 0 (0); big 1, mid 1 (1); big 2, big 3, mid 2 (2); then big 4 and 5 (3).
    assert order[:mid_done].count(big.pk) == 8, order


def test_a_small_folder_has_slots_no_big_folder_takes(make_notes_folder, settings, tmp_path):
    big = make_notes_folder("big", 12)
    small = make_notes_folder("small", 2)

    with worker_on(QueueName.INDEXING_SMALL, settings, tmp_path):
        wait_indexed(small)

    assert not File.objects.filter(folder=big, status="indexed").exists()


@pytest.mark.parametrize(("position", "priority"), [(0, 0), (1, 1), (2, 2), (3, 2), (4, 3), (255, 8), (10_000, 9)])
def test_a_runs_tasks_sink_one_priority_step_each_time_their_position_doubles(position, priority):
    assert run_priority(position) == priority

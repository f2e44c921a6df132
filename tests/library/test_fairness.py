"""Fairness across folders: a small folder queued behind a big one is not served after all of it.

Both folders' groups are queued before a real worker (one slot) starts, the big folder's first, as
when a small folder is added while a big one indexes: the worker takes each run's early groups
ahead of the big run's later ones (``workers.queues.run_priority``).
"""

from __future__ import annotations

import time

import pytest

from apps.library.indexing import folder_index
from apps.library.models import File, Folder
from tests.support.files import write
from tests.support.servers import BASE_DIR, start_celery_worker, test_database_env
from workers.queues import QueueName

BIG_FILES = 12
SMALL_FILES = 4


def test_a_small_folder_queued_after_a_big_one_is_served_among_its_first_groups(
    transactional_db, tmp_path, settings, user, other_user
):
    # Two tiny files per index_files task: enough tasks to see the order the worker takes them in.
    settings.EMBEDDING_BATCH_SIZE = 1
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path)]
    for n in range(BIG_FILES):
        write(tmp_path / "big", f"note-{n:02}.md", f"# Big {n}\n\nA note of the big folder, number {n}.")
    for n in range(SMALL_FILES):
        write(tmp_path / "small", f"memo-{n}.md", f"# Small {n}\n\nA memo of the small folder, number {n}.")
    big = Folder.objects.create(owner=user, source="local", external_id=str(tmp_path / "big"), name="big")
    small = Folder.objects.create(owner=other_user, source="local", external_id=str(tmp_path / "small"), name="small")
    folder_index(folder_id=big.pk)  # queued: BIG_FILES / 2 tasks
    folder_index(folder_id=small.pk)  # then SMALL_FILES / 2 tasks

    env = test_database_env(EMBEDDING_PROVIDER=settings.EMBEDDING_PROVIDER, LOCAL_FOLDER_ROOTS=str(tmp_path))
    log_path = BASE_DIR / "var" / f"test-fairness-worker-{time.monotonic_ns()}.log"
    with start_celery_worker(env=env, queues=[QueueName.INDEXING.value], log_path=log_path, name="fairness"):
        deadline = time.monotonic() + 60
        while File.objects.exclude(status="indexed").exists():
            assert time.monotonic() < deadline, list(File.objects.values_list("path", "status"))
            time.sleep(0.2)

    order = list(File.objects.order_by("indexed_at").values_list("folder_id", flat=True))
    small_done = max(index for index, folder_id in enumerate(order) if folder_id == small.pk)
    big_before = order[:small_done].count(big.pk)
    # First-come first-served would index all 12 big files first. Here the worker alternates the
    # two runs' first groups (priority 0, then 1): the small folder is done after 2 big groups.
    assert big_before == 4, order


@pytest.mark.parametrize(("position", "priority"), [(0, 0), (1, 1), (2, 2), (3, 2), (4, 3), (255, 8), (10_000, 9)])
def test_a_runs_tasks_sink_one_priority_step_each_time_their_position_doubles(position, priority):
    from workers.queues import run_priority

    assert run_priority(position) == priority

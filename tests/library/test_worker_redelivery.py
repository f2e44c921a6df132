"""A worker killed mid-file: the message is redelivered and the file ends indexed exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from contextlib import AbstractContextManager, ExitStack

import pytest

from apps.library.indexing import folder_index
from apps.library.models import Chunk, File, IndexingJob
from tests.library.conftest import write
from tests.support.servers import BASE_DIR, start_celery_worker, test_database_env

VISIBILITY_TIMEOUT = 3


def _worker(name: str) -> AbstractContextManager[subprocess.Popen[bytes]]:
    env = test_database_env(
        EMBEDDING_PROVIDER="hash",
        # Unacked messages of a dead worker become visible again after this many seconds.
        CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY_TIMEOUT),
    )
    return start_celery_worker(
        env=env,
        queues=["indexing", "backfill", "organize"],
        log_path=BASE_DIR / "var" / f"test-worker-{os.getpid()}-{name}.log",
        name=name,
    )


def _wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_file_is_indexed_exactly_once_after_its_worker_is_killed_mid_file(root, folder):
    # Big enough that parsing, chunking and embedding take seconds: the kill lands mid-file.
    write(root, "big.txt", " ".join(f"token{n % 5000} alpha beta gamma." for n in range(60000)))
    with ExitStack() as workers:
        first = workers.enter_context(_worker("doomed"))
        folder_index(folder_id=folder.pk)
        file = File.objects.get(folder=folder)
        _wait_until(lambda: File.objects.get(pk=file.pk).status == "indexing", 30, "the worker to claim the file")
        time.sleep(0.5)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        assert File.objects.get(pk=file.pk).status == "indexing"
        assert not Chunk.objects.filter(file=file).exists()  # the dead worker's transaction never committed
        time.sleep(VISIBILITY_TIMEOUT + 0.5)
        workers.enter_context(_worker("survivor"))
        _wait_until(lambda: File.objects.get(pk=file.pk).status == "indexed", 90, "the redelivered task")
        file.refresh_from_db()
        chunks = Chunk.objects.filter(file=file)
        assert file.chunk_count > 1000
        assert chunks.count() == file.chunk_count
        assert sorted(chunks.values_list("chunk_index", flat=True)) == list(range(file.chunk_count))
        job = IndexingJob.objects.get(file=file)
        assert (job.status, job.attempts) == ("succeeded", 2)  # the same message, delivered twice
        folder.refresh_from_db()
        assert (folder.files_total, folder.files_indexed, folder.status) == (1, 1, "ready")

"""The watcher: filesystem events of local folders queue their sync, debounced (apps/connectors/local_watch.py).

The end-to-end tests run the Procfile's two processes, `manage.py watch_folders` and a Celery worker,
and time a file from being written to being found by search.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.utils import timezone

from apps.connectors.local_watch import Debouncer, FolderWatcher
from apps.library.models import Folder, SyncLog
from apps.search.selectors import chunk_search
from apps.search.types import SearchMode
from tests.support.servers import BASE_DIR, start_watcher, test_database_env
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def found(folder: Folder, word: str) -> bool:
    return bool(chunk_search(folder_id=folder.pk, query=word, k=3, mode=SearchMode.KEYWORD))


def watched_folder(user, path: Path) -> Folder:
    # Synced just now with a day's interval: only the watcher can make it sync again.
    return Folder.objects.create(
        owner=user,
        source="local",
        external_id=str(path),
        name=path.name,
        status="ready",
        last_synced_at=timezone.now(),
        sync_interval_seconds=86_400,
    )


def test_debouncer_waits_for_quiet_but_not_past_max_wait() -> None:
    now = [0.0]
    debouncer = Debouncer(quiet=1.0, max_wait=5.0, clock=lambda: now[0])
    debouncer.touch(7)
    now[0] = 0.9
    assert debouncer.due() == []
    now[0] = 1.0
    assert debouncer.due() == [7]
    debouncer.take(7)
    assert debouncer.due() == []
    # Writes every half second never leave the folder quiet: it is due at max_wait all the same.
    for step in range(12):
        now[0] = 10.0 + step * 0.5
        debouncer.touch(8)
        assert debouncer.due() == ([8] if step * 0.5 >= 5.0 else []), step


@pytest.fixture
def in_process_watcher() -> Iterator[tuple[FolderWatcher, list[int]]]:
    """The watcher in this process with a real inotify observer, recording what it would queue."""
    queued: list[int] = []
    watcher = FolderWatcher(quiet=0.2, max_wait=2.0, poll_seconds=3600, enqueue=queued.append)
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, kwargs={"stop": stop, "tick": 0.05})
    thread.start()
    time.sleep(0.5)  # its first refresh (finding no folder) is over: the tests' own refreshes never race it
    yield watcher, queued
    stop.set()
    thread.join(timeout=15)


def test_writes_queue_one_sync_while_reads_excluded_paths_and_held_claims_do_not(
    user, tmp_path: Path, in_process_watcher
) -> None:
    watcher, queued = in_process_watcher
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "notes.txt").write_text("before")
    folder = watched_folder(user, tmp_path)
    watcher.refresh()
    assert watcher.watched == {folder.pk}

    for n in range(20):
        (tmp_path / f"burst-{n}.txt").write_text(f"file {n}")
    wait_for(lambda: queued == [folder.pk], timeout=5, what="one sync queued for the burst")
    time.sleep(0.5)
    assert queued == [folder.pk]

    # The indexer reads files; excluded paths (node_modules/ by default) never sync.
    assert (tmp_path / "notes.txt").read_text() == "before"
    (tmp_path / "node_modules" / "lib.js").write_text("module.exports = 1")
    time.sleep(0.8)
    assert queued == [folder.pk]

    # A sync holding the claim may have listed before this change: ours waits until it is released.
    Folder.objects.filter(pk=folder.pk).update(sync_started_at=timezone.now())
    (tmp_path / "notes.txt").write_text("after")
    time.sleep(0.8)
    assert queued == [folder.pk]
    Folder.objects.filter(pk=folder.pk).update(sync_started_at=None)
    wait_for(lambda: queued == [folder.pk, folder.pk], timeout=5, what="the held change queued after the claim")


def test_folders_added_removed_or_gone_from_disk(user, tmp_path: Path, in_process_watcher, monkeypatch) -> None:
    watcher, queued = in_process_watcher
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    one = watched_folder(user, first)
    watcher.refresh()
    two = watched_folder(user, second)
    missing = watched_folder(user, tmp_path / "not-there")
    watcher.refresh()
    assert watcher.watched == {one.pk, two.pk}  # the missing directory is logged and tried again later

    Folder.objects.filter(pk=one.pk).delete()
    watcher.refresh()
    assert watcher.watched == {two.pk}
    (first / "a.txt").write_text("no longer watched")
    (second / "b.txt").write_text("watched")
    wait_for(lambda: queued == [two.pk], timeout=5, what="the remaining folder's sync")
    time.sleep(0.5)
    assert queued == [two.pk] and missing.pk not in watcher.watched

    # A directory that goes away takes its inotify watch along: it is watched again once it is back,
    # and syncs once for what changed unseen meanwhile.
    monkeypatch.setattr("apps.connectors.local_watch.RETRY_SECONDS", 0.0)
    shutil.rmtree(second)
    watcher.refresh()
    assert watcher.watched == set()
    time.sleep(0.5)  # whatever the removal's own events queued is in by now
    before = len(queued)
    second.mkdir()
    (second / "c.txt").write_text("written while not watched")
    watcher.refresh()
    assert watcher.watched == {two.pk}
    wait_for(lambda: len(queued) == before + 1, timeout=5, what="a sync for the directory watched again")
    assert queued[-1] == two.pk


@pytest.fixture
def watcher_process(celery_worker_process) -> Iterator[Path]:
    """`manage.py watch_folders` beside a real worker, on the test database; its log's path."""
    log_path = BASE_DIR / "var" / f"test-watcher-{os.getpid()}.log"
    env = test_database_env(EMBEDDING_PROVIDER="hash", WATCHER_POLL_SECONDS="0.5")
    with start_watcher(env=env, log_path=log_path):
        yield log_path


@pytest.mark.worker
def test_a_file_written_is_searchable_within_10_seconds_through_the_watcher_and_a_worker(
    user, tmp_path: Path, watcher_process: Path
) -> None:
    # Connected after the watcher started: it reads the set of local folders while it runs.
    folder = watched_folder(user, tmp_path)
    wait_for(
        lambda: f"watching folder {folder.pk}" in watcher_process.read_text(), timeout=5, what="the folder watched"
    )

    (tmp_path / "boiler.md").write_text("# Boiler\n\nServiced by Heatwise; the zygomorphic valve was replaced.\n")
    written = time.monotonic()
    wait_for(lambda: found(folder, "zygomorphic"), timeout=10, what="the new file searchable")
    delay = time.monotonic() - written
    print(f"written -> searchable: {delay:.2f} s")  # noqa: T201 - the figure, with -s

    (tmp_path / "boiler.md").write_text("# Boiler\n\nServiced by Heatwise; the quinquennial check is due.\n")
    wait_for(lambda: found(folder, "quinquennial"), timeout=10, what="the changed file searchable")
    assert not found(folder, "zygomorphic")
    (tmp_path / "boiler.md").unlink()
    wait_for(lambda: not found(folder, "quinquennial"), timeout=10, what="the deleted file gone from search")
    assert SyncLog.objects.filter(folder=folder, added=1).exists()
    # The sync logs itself after the deletion it made has committed (and left search).
    wait_for(
        lambda: SyncLog.objects.filter(folder=folder, deleted=1).exists(), timeout=5, what="the deletion's sync logged"
    )


def test_the_watcher_process_stops_on_sigterm(watcher_process_alone) -> None:
    process, log_path = watcher_process_alone
    process.terminate()
    assert process.wait(timeout=15) == 0
    assert "Stopped." in log_path.read_text()


@pytest.fixture
def watcher_process_alone(transactional_db) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    log_path = BASE_DIR / "var" / f"test-watcher-alone-{os.getpid()}.log"
    with start_watcher(env=test_database_env(), log_path=log_path) as process:
        yield process, log_path

"""A Drive folder kept in sync by a real beat process and a real worker, both on the emulator.

The folder is added through the API and indexed by the worker; beat runs ``sync_due_folders``
every 2 s from the django-celery-beat tables, the folder's interval is 1 s, and every kind of
change made in the emulator shows up in the index after the next beat-driven sync.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from apps.library.models import Chunk, File, Folder, SyncLog
from emulators.drive.server import DriveEmulator
from emulators.drive.state import DriveState
from tests.support import waiting
from tests.support.drive_tree import Tree, chunk_ids, long_text, paths
from tests.support.servers import BASE_DIR, spawn, stop, test_database_env

pytestmark = [pytest.mark.worker, pytest.mark.slow]

SYNC_DUE = "workers.sync.sync_due_folders"
# A beat tick, a worker's sync and its indexing: slower than the default wait allows for.
wait_for = functools.partial(waiting.wait_for, timeout=90, interval=0.25)


@pytest.fixture
def drive_env(monkeypatch: pytest.MonkeyPatch, emulator: DriveEmulator, drive_settings) -> None:
    """The emulator for this process and, through the environment, for the worker and beat."""
    monkeypatch.setenv("DRIVE_API_ENDPOINT", emulator.url)
    drive_settings.FOLDER_SYNC_INTERVAL_SECONDS = 1  # new folders are due a second after a sync


@pytest.fixture
def worker(drive_env: None, celery_worker_process: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    return celery_worker_process


@pytest.fixture
def beat(worker: subprocess.Popen[bytes], tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    call_command("install_beat_schedule")
    every_two_seconds, _ = IntervalSchedule.objects.get_or_create(every=2, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.filter(task=SYNC_DUE).update(interval=every_two_seconds)
    PeriodicTask.objects.exclude(task=SYNC_DUE).update(enabled=False)
    log_path = BASE_DIR / "var" / f"test-beat-{os.getpid()}.log"
    process = spawn(
        [
            "celery",
            "-A",
            "config",
            "beat",
            "--scheduler",
            "django_celery_beat.schedulers:DatabaseScheduler",
            "--max-interval=1",
            "--loglevel=INFO",
            f"--schedule={tmp_path / 'beat-schedule'}",
        ],
        env=test_database_env(),
        log_path=log_path,
    )
    try:
        wait_for(lambda: "beat: Starting" in log_path.read_text(), what="beat to start", process=process)
        yield process
    finally:
        stop(process)


def all_indexed(folder: Folder, expected: set[str]) -> bool:
    files = File.objects.filter(folder=folder)
    return paths(folder) == expected and all(file.status == "indexed" for file in files)


def test_drive_changes_reach_the_index_through_beat_and_a_worker(
    beat, auth_client, tree: Tree, state: DriveState
) -> None:
    old = state.add_file("old.txt", long_text("Old"), parent_id=tree.root)
    response = auth_client.post("/api/folders", {"source": "drive", "drive_folder_id": tree.root}, format="json")
    assert response.status_code == 201, response.json()
    folder = Folder.objects.get(pk=response.json()["id"])
    assert folder.sync_interval_seconds == 1

    initial = {"lease.txt", "notes.txt", "a/deep.txt", "doc", "old.txt"}
    wait_for(lambda: all_indexed(folder, initial), what="the worker to index the folder")
    # The first beat-driven sync is a full diff that stores a changes cursor.
    wait_for(lambda: Folder.objects.filter(pk=folder.pk).exclude(sync_cursor="").exists(), what="a cursor")
    before = chunk_ids(folder)
    logs_before = set(SyncLog.objects.filter(folder=folder).values_list("pk", flat=True))

    state.edit(tree.lease, long_text("Lease, second edition"))
    state.delete(old)
    state.rename(tree.notes, "notes-2024.txt")
    state.move(tree.deep, tree.b)  # between subfolders
    state.move(tree.doc, tree.elsewhere)  # out of the folder
    state.add_file("new.txt", long_text("Brand new"), parent_id=tree.a)

    expected = {"lease.txt", "notes-2024.txt", "b/deep.txt", "a/new.txt"}
    wait_for(
        lambda: (
            all_indexed(folder, expected)
            and Chunk.objects.filter(file__folder=folder, text__contains="second edition").exists()
        ),
        what="the changes to be synced and indexed",
    )

    after = chunk_ids(folder)
    assert after["notes-2024.txt"] == before["notes.txt"]  # renamed: chunks kept
    assert after["b/deep.txt"] == before["a/deep.txt"]  # moved: chunks kept
    assert not after["lease.txt"] & before["lease.txt"]  # edited: re-indexed
    assert not Chunk.objects.filter(folder=folder, file__path__in=["old.txt", "doc"]).exists()
    logs = SyncLog.objects.filter(folder=folder).exclude(pk__in=logs_before)
    assert {log.mode for log in logs} == {"changes"} and not any(log.error for log in logs)
    totals = [sum(getattr(log, name) for log in logs) for name in ("added", "modified", "deleted", "moved")]
    assert totals == [1, 1, 2, 2]
    listed = auth_client.get(f"/api/folders/{folder.pk}/sync-log").json()["results"]
    assert listed[0]["mode"] == "changes" and listed[-1]["mode"] == "full"

"""Drive sync cost with the emulator holding 10,000 files in nested subfolders (issue 4 targets).

- a sync with no changes: O(1) API calls, under 1 s;
- a sync with 50 changes: API calls in proportion to the changes (runs with 10 and 200 too, to show it);
- a full listing diff of 10,000 files: under 5 s of our own time, excluding downloads.

The emulator runs in its own process (it would otherwise share our GIL), driven through a pipe.
Indexing is stubbed at the boundary: queued index tasks are counted, not run, and the files are
marked indexed after the first listing, so the measured full diff lists and reconciles 10,000
files and re-indexes none. Everything happens in a scratch database that is dropped afterwards.

    .venv/bin/python bench/ingest/drive_sync.py [--files 10000]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.common.scratch import scratch_services

FOLDERS_PER_LEVEL = 10  # 10 departments x 10 teams, the files spread over the 100 team folders


def serve_emulator(conn: Connection, files: int) -> None:
    """Child process: a seeded emulator, then ``(method, args)`` calls on its state from the pipe."""
    from emulators.drive.server import DriveEmulator

    emulator = DriveEmulator().start()
    state = emulator.state
    root = state.add_folder("Bench")
    teams = [
        state.add_folder(f"team-{t}", parent_id=department)
        for d in range(FOLDERS_PER_LEVEL)
        for department in [state.add_folder(f"dept-{d}", parent_id=root)]
        for t in range(FOLDERS_PER_LEVEL)
    ]
    file_ids = [
        state.add_file(f"doc-{n}.txt", f"document {n}".encode(), parent_id=teams[n % len(teams)]) for n in range(files)
    ]
    conn.send((emulator.url, root, teams, file_ids))
    while (message := conn.recv()) is not None:
        method, args, kwargs = message
        conn.send(dict(state.calls) if method == "calls" else getattr(state, method)(*args, **kwargs))
    emulator.stop()


class Emulator:
    def __init__(self, files: int) -> None:
        self._conn, child = multiprocessing.Pipe()
        self._process = multiprocessing.get_context("spawn").Process(target=serve_emulator, args=(child, files))
        self._process.start()
        self.url, self.root, self.teams, self.file_ids = self._conn.recv()

    def __call__(self, method: str, *args: Any, **kwargs: Any) -> Any:
        self._conn.send((method, args, kwargs))
        return self._conn.recv()

    def close(self) -> None:
        self._conn.send(None)
        self._process.join(timeout=10)


def make_changes(emulator: Emulator, count: int, offset: int) -> None:
    """``count`` changes: half edits, then renames, moves between subfolders, deletions, additions."""
    ids = emulator.file_ids
    teams = emulator.teams
    for n in range(count):
        file_id = ids[(offset * 1009 + n * 97) % len(ids)]
        kind = n % 10
        if kind < 5:
            emulator("edit", file_id, f"edited {offset} {n}".encode())
        elif kind < 7:
            emulator("rename", file_id, f"renamed-{offset}-{n}.txt")
        elif kind == 7:
            emulator("move", file_id, teams[(n * 7 + offset) % len(teams)])
        elif kind == 8:
            emulator("delete", file_id)
            ids.remove(file_id)
        else:
            emulator("add_file", f"new-{offset}-{n}.txt", b"new", parent_id=teams[n % len(teams)])


def sync(folder_id: int, emulator: Emulator) -> tuple[Any, int, float, float]:
    """(SyncLog, calls the emulator saw, wall seconds, our CPU seconds)."""
    from apps.library.sync import folder_sync

    emulator("reset_calls")
    wall, cpu = time.perf_counter(), time.process_time()
    log = folder_sync(folder_id=folder_id)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert log is not None and not log.error, log and log.error
    return log, sum(emulator("calls").values()), wall, cpu


def report(label: str, log: Any, seen: int, wall: float, cpu: float) -> None:
    print(
        f"  {label:<34} {log.mode:<8} {log.summary:<16} moved {log.moved:<4} "
        f"API calls {log.api_calls:>4} (emulator saw {seen:>4})  {wall:6.3f} s wall, {cpu:6.3f} s CPU"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()

    started = time.perf_counter()
    emulator = Emulator(args.files)
    print(
        f"emulator seeded with {args.files} files in {len(emulator.teams)} nested folders "
        f"in {time.perf_counter() - started:.1f} s"
    )
    try:
        with scratch_services("bench_drive"):
            run(emulator, args.files)
    finally:
        emulator.close()


def run(emulator: Emulator, files: int) -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db.models import F

    from apps.library import enqueue
    from apps.library.models import File, Folder

    settings.DRIVE_API_ENDPOINT = emulator.url
    reconciling: list[float] = []
    _time_reconciles(reconciling)
    queued: list[int] = []
    # The indexing boundary: count what a sync queues instead of sending it to a worker.
    enqueue.index_files = lambda file_ids, **options: queued.extend(file_ids)  # type: ignore[assignment]

    owner = get_user_model().objects.create(username="bench-drive")
    folder = Folder.objects.create(owner=owner, source="drive", external_id=emulator.root, name="Bench")

    def settle() -> None:
        """What the (stubbed) indexing would have done: every file's current content is indexed."""
        File.objects.filter(folder=folder).update(status="indexed", indexed_checksum=F("checksum"))
        queued.clear()

    print(f"\nfolder of {files} files:")
    report("first sync (everything added)", *sync(folder.pk, emulator))
    settle()
    quiet, _, quiet_wall, _ = result = sync(folder.pk, emulator)
    report("sync, no changes", *result)
    per_change = {}
    for offset, count in enumerate([10, 50, 200], start=1):
        make_changes(emulator, count, offset)
        log = (result := sync(folder.pk, emulator))[0]
        report(f"sync, {count} changes ({len(queued)} queued)", *result)
        per_change[count] = log.api_calls
        settle()
    Folder.objects.filter(pk=folder.pk).update(sync_cursor="")
    reconciling.clear()
    full, _, full_wall, full_cpu = result = sync(folder.pk, emulator)
    report(f"full diff, {File.objects.filter(folder=folder).count()} files", *result)
    assert (full.mode, full.summary, full.moved, len(queued)) == ("full", "+0 ~0 -0", 0, 0)

    print("\ntargets:")
    print(f"  no changes: {quiet.api_calls} API call(s), {quiet_wall:.3f} s (target O(1), < 1 s)")
    ratios = ", ".join(f"{count}: {calls} calls ({calls / count:.2f}/change)" for count, calls in per_change.items())
    print(f"  changes:    {ratios} (target: proportional to the changes)")
    print(
        f"  full diff:  {full_wall:.2f} s wall, no downloads (target < 5 s): listing {full_wall - reconciling[0]:.2f} s"
        f" (emulator-bound; {full_cpu:.2f} s CPU here in all), reconcile {reconciling[0]:.2f} s"
    )


def _time_reconciles(seconds: list[float]) -> None:
    """Record how long each full-listing reconcile (database work) of the Drive sync takes."""
    from apps.connectors.drive import sync as drive_sync

    reconcile = drive_sync.folder_reconcile

    def timed(**kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return reconcile(**kwargs)
        finally:
            seconds.append(time.perf_counter() - started)

    drive_sync.folder_reconcile = timed  # type: ignore[assignment]


if __name__ == "__main__":
    main()

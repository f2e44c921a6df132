"""The folders page with 200 folders (issue 40 item 4): target <= 300 ms.

One user owning ``--owned`` folders and a member of ``--shared`` more (others' folders, viewer or
editor), every third folder with two members, each with ``--files`` file rows, ``--sync-logs``
syncs behind it (the newest one the page shows) and a few indexing jobs, in a scratch database,
vacuumed and analysed. Measured in process through Django's test client, logged in by session as
the browser is: the page's HTML (``GET /``), the list it loads (``GET /api/folders?limit=200``,
folders.js), and the requests folders.js sends per card after the list (the last sync's summary
when the list does not carry it, and each followed folder's state), then the whole load: p50 /
p95 over ``--repeats`` after one warm-up, and the statements each sends.

    .venv/bin/python bench/ops/folders_page.py [--owned 150] [--shared 50] [--repeats 20] [--redis-db 11]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.common.machine import cpu, load_average
from bench.common.scratch import scratch_services

# folders.js opens an event stream, after one GET of the folder, for this many cards (folder-stream.js).
FOLLOWED = 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--owned", type=int, default=150)
    parser.add_argument("--shared", type=int, default=50)
    parser.add_argument("--files", type=int, default=20, help="file rows per folder")
    parser.add_argument("--sync-logs", type=int, default=500, help="syncs per folder (hourly for three weeks)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--redis-db", type=int, default=11, help="scratch Redis db (flushed afterwards)")
    args = parser.parse_args()
    print(cpu())
    with scratch_services("bench_folders_page", redis_db=args.redis_db):
        user = load(owned=args.owned, shared=args.shared, files=args.files, sync_logs=args.sync_logs)
        measure(user=user, repeats=args.repeats)


def load(*, owned: int, shared: int, files: int, sync_logs: int) -> Any:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from apps.library.models import File, Folder, FolderMembership, IndexingJob, JobKind, JobStatus, SyncLog

    started = time.perf_counter()
    users = get_user_model().objects
    user = users.create_user(username="bench")
    others = [users.create_user(username=f"other-{n}") for n in range(6)]
    now = timezone.now()
    folders = Folder.objects.bulk_create(
        Folder(
            owner=user if n < owned else others[n % 6],
            source="local",
            external_id=f"/bench/folder-{n}",
            name=f"Folder {n}",
            status="ready",
            files_total=files,
            files_indexed=files,
            last_synced_at=now,
        )
        for n in range(owned + shared)
    )
    memberships = [
        FolderMembership(folder=folder, user=user, role="viewer" if n % 2 else "editor")
        for n, folder in enumerate(folders)
        if n >= owned
    ]
    memberships += [
        FolderMembership(folder=folder, user=others[(n + k) % 6], role="viewer")
        for n, folder in enumerate(folders)
        if n < owned and n % 3 == 0
        for k in (1, 2)
    ]
    FolderMembership.objects.bulk_create(memberships)
    File.objects.bulk_create(
        (
            File(folder=folder, external_id=f"f{k}.txt", path=f"f{k}.txt", name=f"f{k}.txt", status="indexed")
            for folder in folders
            for k in range(files)
        ),
        batch_size=2000,
    )
    SyncLog.objects.bulk_create(
        (
            SyncLog(folder=folder, mode="full", added=k % 3, modified=k % 2)
            for folder in folders
            for k in range(sync_logs)
        ),
        batch_size=5000,
    )
    IndexingJob.objects.bulk_create(
        IndexingJob(folder=folder, kind=JobKind.SYNC, status=JobStatus.SUCCEEDED, celery_task_id=f"t{folder.pk}-{k}")
        for folder in folders
        for k in range(3)
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    rows = f"{files * len(folders):,} files, {sync_logs * len(folders):,} sync logs"
    print(
        f"  {len(folders)} folders ({owned} owned, {shared} shared), {len(memberships)} memberships, {rows}"
        f" in {time.perf_counter() - started:.1f} s"
    )
    return user


def measure(*, user: Any, repeats: int) -> None:
    from django.test import Client

    client = Client()
    client.force_login(user)
    folders = _ok(client.get("/api/folders", {"limit": 200})).json()["results"]
    cards = [folder for folder in folders if folder["last_synced_at"]]

    def follow_ups() -> None:
        # What folders.js asks after the list: a card's last sync unless the list carries it,
        # and the state of each followed folder before its stream opens.
        for folder in cards:
            if "last_sync" not in folder:
                _ok(client.get(f"/api/folders/{folder['id']}/sync-log", {"limit": 1}))
        for folder in folders[:FOLLOWED]:
            _ok(client.get(f"/api/folders/{folder['id']}"))

    steps: list[tuple[str, Callable[[], object]]] = [
        ("page HTML (GET /)", lambda: _ok(client.get("/"))),
        (f"folder list (GET /api/folders, {len(folders)})", lambda: _ok(client.get("/api/folders", {"limit": 200}))),
        ("follow-up requests", follow_ups),
    ]
    requests = len([folder for folder in cards if "last_sync" not in folder]) + min(FOLLOWED, len(folders))
    print(f"  follow-up requests per load: {requests} (last sync per card unless listed, {FOLLOWED} followed folders)")
    print(f"  {'step':<40} {'p50 ms':>8} {'p95 ms':>8} {'statements':>11}")
    totals = [0.0] * repeats
    for label, step in steps:
        step()
        timings, statements = [], 0
        for n in range(repeats):
            elapsed, statements = _timed(step)
            timings.append(elapsed)
            totals[n] += elapsed
        print(f"  {label:<40} {statistics.median(timings):8.1f} {_p95(timings):8.1f} {statements:>11}")
    p95 = _p95(totals)
    print(f"  {'whole load (the three, in turn)':<40} {statistics.median(totals):8.1f} {p95:8.1f}")
    print(f"  target <= 300 ms: {'met' if p95 <= 300 else 'MISSED'} ({load_average()})")


def _timed(step: Callable[[], object]) -> tuple[float, int]:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    reset_queries()  # the log keeps 9,000 statements: a long run would overflow it and count none
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        step()
        elapsed = (time.perf_counter() - started) * 1000
    return elapsed, len(queries)


def _p95(timings: list[float]) -> float:
    return statistics.quantiles(timings, n=20)[18] if len(timings) > 1 else timings[0]


def _ok(response: Any) -> Any:
    assert response.status_code == 200, (response.status_code, response.content[:300])
    return response


if __name__ == "__main__":
    main()

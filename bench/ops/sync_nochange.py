"""A no-change sync of a local folder at 100,000 files (issue 40 item 4): target <= 5 s.

Builds a synthetic local folder of ``--files`` small files in nested directories under a temporary
directory, registers it as a folder and indexes its listing through the product's own code
(``LocalSource`` hashing every file, ``folder_reconcile`` creating the rows), then marks every row
indexed the way a finished index leaves it (``indexed_checksum`` = ``checksum``), so a sync finds
nothing to do. Then times ``folder_sync`` (what the beat's ``sync_folder`` task runs) in process,
``--repeats`` times: p50 / max, the statements it sends, and the floor of the file system alone
(``os.scandir`` of every directory and a ``stat`` of every file, no product code). One run under
cProfile gives the breakdown: the product's phases, and the top functions by own time.

    .venv/bin/python bench/ops/sync_nochange.py [--files 100000] [--repeats 5] [--redis-db 11]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.common.machine import cpu, load_average
from bench.common.scratch import scratch_services

WORDS = ["report", "invoice", "notes", "minutes", "budget", "contract", "draft", "summary", "plan", "photo"]
EXTENSIONS = ["txt", "md", "csv", "json", "html", "pdf"]
# The product's phases, as cProfile names them: (label, file suffix, function).
PHASES = [
    ("known rows read (one query)", "connectors/local_sync.py", "<dictcomp>"),
    ("listing (walk, stat, entries)", "connectors/local.py", "list_entries"),
    ("  of which hashing files", "connectors/local.py", "_sha256"),
    ("reconcile (compare, write)", "library/reconcile.py", "folder_reconcile"),
    ("counters refresh", "library/progress.py", "folder_counters_refresh"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--per-directory", type=int, default=100, help="files in each leaf directory")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--redis-db", type=int, default=11, help="scratch Redis db (flushed afterwards)")
    parser.add_argument("--top", type=int, default=25, help="functions shown from the profile")
    args = parser.parse_args()
    print(cpu())
    with (
        tempfile.TemporaryDirectory(prefix="bench-sync-") as temporary,
        scratch_services("bench_sync_nochange", redis_db=args.redis_db),
    ):
        root = Path(temporary) / "folder"
        started = time.perf_counter()
        directories = build_tree(root, files=args.files, per_directory=args.per_directory)
        print(f"  {args.files:,} files in {directories:,} directories written in {time.perf_counter() - started:.1f} s")
        folder_id = load(root)
        measure(folder_id=folder_id, root=root, repeats=args.repeats)
        profile(folder_id=folder_id, top=args.top)


def build_tree(root: Path, *, files: int, per_directory: int) -> int:
    """``files`` files of 40-200 bytes, ``per_directory`` to a leaf, leaves three levels deep."""
    directories = 0
    for first in range(0, files, per_directory):
        leaf = root / f"{WORDS[first // per_directory % 10]}-{first // (per_directory * 100)}" / f"{first // 1000}"
        leaf = leaf / f"batch-{first // per_directory}"
        leaf.mkdir(parents=True)
        directories += 1
        for n in range(first, min(first + per_directory, files)):
            body = f"{WORDS[n % 10]} {n} " * (1 + n % 12)
            (leaf / f"{WORDS[(n * 7) % 10]}-{n}.{EXTENSIONS[n % 6]}").write_text(body)
    return directories


def load(root: Path) -> int:
    """The folder listed and reconciled by the product, then every row marked indexed."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.db.models import F
    from django.utils import timezone

    from apps.connectors.local import LocalSource
    from apps.library.models import File, FileStatus, Folder, FolderStatus
    from apps.library.progress import folder_counters_refresh
    from apps.library.reconcile import folder_reconcile

    user = get_user_model().objects.create_user(username="bench")
    folder = Folder.objects.create(owner=user, source="local", external_id=str(root), name="big")
    started = time.perf_counter()
    source = LocalSource(root)
    result = folder_reconcile(folder=folder, entries=list(source.list_entries()), problems=source.problems())
    listed = time.perf_counter() - started
    # What a finished index leaves: the content indexed is the content listed.
    File.objects.filter(folder=folder).update(
        status=FileStatus.INDEXED, indexed_checksum=F("checksum"), indexed_at=timezone.now(), chunk_count=1
    )
    Folder.objects.filter(pk=folder.pk).update(status=FolderStatus.READY, last_synced_at=timezone.now())
    folder_counters_refresh(folder_id=folder.pk)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE library_file")
    print(f"  first listing (every file hashed) and reconcile: {result.added:,} rows in {listed:.1f} s")
    return folder.pk


def sync_once(folder_id: int) -> tuple[float, float, list[dict[str, str]]]:
    """Wall seconds, this process's CPU seconds (the machine is shared: the one load cannot
    inflate), and the statements sent."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.library.sync import folder_sync

    with CaptureQueriesContext(connection) as queries:
        started, cpu_started = time.perf_counter(), time.process_time()
        log = folder_sync(folder_id=folder_id)
        elapsed, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    assert log is not None and not log.error, log and log.error
    changed = (log.added, log.modified, log.deleted, log.moved)
    assert changed == (0, 0, 0, 0), f"not a no-change sync: added, modified, deleted, moved = {changed}"
    return elapsed, cpu_seconds, queries.captured_queries


def walk_floor(root: Path) -> tuple[float, int]:
    """The file system's share alone: every directory scanned, every file stat'ed."""
    started = time.perf_counter()
    pending, files = [str(root)], 0
    while pending:
        with os.scandir(pending.pop()) as children:
            for child in children:
                if child.is_dir(follow_symlinks=False):
                    pending.append(child.path)
                else:
                    child.stat(follow_symlinks=False)
                    files += 1
    return time.perf_counter() - started, files


def measure(*, folder_id: int, root: Path, repeats: int) -> None:
    sync_once(folder_id)  # warm: the page cache and the connection, as a beat sync finds them
    timings: list[float] = []
    cpu_timings: list[float] = []
    statements: list[dict[str, str]] = []
    for _ in range(repeats):
        elapsed, cpu_seconds, statements = sync_once(folder_id)
        timings.append(elapsed)
        cpu_timings.append(cpu_seconds)
    floor, files = walk_floor(root)
    p50 = statistics.median(timings)
    print(f"  no-change sync of {files:,} files, {repeats} runs: p50 {p50:.2f} s, max {max(timings):.2f} s")
    print(f"  of which this process's CPU: p50 {statistics.median(cpu_timings):.2f} s (the rest: database, waiting)")
    slowest = sorted(statements, key=lambda query: float(query["time"]), reverse=True)[:4]
    print(f"  statements per sync: {len(statements)}; the slowest in the last run:")
    for query in slowest:
        print(f"    {float(query['time']) * 1000:7.1f} ms  {' '.join(query['sql'].split())[:110]}")
    print(f"  floor: os.scandir + stat of every file, no product code: {floor:.2f} s")
    print(f"  target <= 5 s: {'met' if max(timings) <= 5 else 'MISSED'} ({load_average()})")


def profile(*, folder_id: int, top: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    sync_once(folder_id)
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = stats.total_tt  # type: ignore[attr-defined]
    print(f"\n  one sync under cProfile: {total:.2f} s (profiling slows Python calls; shares, not seconds)")
    entries = stats.stats  # type: ignore[attr-defined]
    for label, suffix, name in PHASES:
        cumulative = sum(
            values[3] for (file, _, function), values in entries.items() if file.endswith(suffix) and function == name
        )
        print(f"    {label:<34} {cumulative:7.2f} s  {cumulative / total:5.0%}")
    print(f"\n  top {top} functions by own time:")
    ranked = sorted(entries.items(), key=lambda item: item[1][2], reverse=True)[:top]
    for (file, line, function), (_, calls, own, cumulative, _) in ranked:
        where = f"{Path(file).name}:{line}" if line else file
        print(f"    {own:6.2f} s own {cumulative:6.2f} s cum {calls:>9,} calls  {function} ({where})")


if __name__ == "__main__":
    main()

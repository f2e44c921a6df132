"""Where PostgreSQL's CPU goes while a folder indexes, by function: ``perf`` beside a bench.

Run it beside ``ingest_scale.py`` (started first): for each ``--at`` count it waits until the
newest database whose name starts with ``--databases`` has that many files indexed, records every
CPU for ``--seconds`` with ``perf record -a`` (sampling at ``--frequency`` Hz), and prints the
PostgreSQL processes' busiest functions as ms of CPU a file indexed in the window, one column per
window, so an early and a late window of the same run compare side by side. Needs ``perf`` and
permission to sample every CPU (root, or ``kernel.perf_event_paranoid`` <= 0).

    .venv/bin/python bench/ingest/ingest_scale.py --files 30000 --redis-db 15 &
    .venv/bin/python bench/ingest/postgres_profile.py --at 1200 25100 [--seconds 60] [--top 12]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

import psycopg

from bench.common.machine import cpu, load_average
from bench.common.scratch import database_url

_NEWEST = "SELECT datname FROM pg_database WHERE datname LIKE %s ORDER BY oid DESC LIMIT 1"
_INDEXED = "SELECT count(*) FROM library_file WHERE status = 'indexed'"


class Window(NamedTuple):
    label: str
    files: int  # indexed during the window
    cpu_seconds: float  # PostgreSQL's
    functions: dict[str, float]  # each function's share of PostgreSQL's CPU


def indexed_files(database: str) -> int:
    with psycopg.connect(database_url(database)) as connection:
        try:
            row = connection.execute(_INDEXED).fetchone()
        except psycopg.errors.UndefinedTable:  # a scratch database still being migrated
            return 0
    return int(row[0]) if row else 0


def wait_for(prefix: str, files: int) -> tuple[str, int]:
    """The newest database of ``prefix`` once it has ``files`` files indexed, and its count then."""
    with psycopg.connect(database_url("postgres"), autocommit=True) as admin:
        while True:
            row = admin.execute(_NEWEST, [prefix + "%"]).fetchone()
            if row is not None and (count := indexed_files(row[0])) >= files:
                return row[0], count
            time.sleep(1)


def postgres_functions(data: Path) -> tuple[float, dict[str, float]]:
    """PostgreSQL's samples over all samples, and each function's share of PostgreSQL's."""
    report = ["perf", "report", "-i", str(data), "--no-children", "-g", "none", "--stdio"]
    by_comm = subprocess.run([*report, "--sort", "comm"], capture_output=True, text=True, check=True).stdout
    share = sum(_percent(line) for line in by_comm.splitlines() if line.split()[-1:] == ["postgres"])
    by_symbol = subprocess.run(
        [*report, "--comm", "postgres", "--percentage", "relative", "--sort", "sym"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    functions = {}
    for line in by_symbol.splitlines():
        if line.strip() and not line.startswith("#"):
            functions[line.split()[-1]] = _percent(line)
    return share, functions


def _percent(line: str) -> float:
    return float(line.split()[0].rstrip("%")) / 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--at", type=int, nargs="+", required=True, help="files indexed when a window starts")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--frequency", type=int, default=499)
    parser.add_argument("--databases", default="bench_ingest_scale")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    print(cpu())
    windows: list[Window] = []
    with tempfile.TemporaryDirectory() as scratch:
        for files in args.at:
            database, before = wait_for(args.databases, files)
            data = Path(scratch) / f"perf-{files}.data"
            record = ["perf", "record", "-F", str(args.frequency), "-a", "-o", str(data), "sleep", str(args.seconds)]
            subprocess.run(record, capture_output=True, check=True)
            done = indexed_files(database) - before
            share, functions = postgres_functions(data)
            cpu_seconds = share * args.seconds * (os.cpu_count() or 1)
            windows.append(Window(f"from {before:,}", done, cpu_seconds, functions))
            print(f"{database}: {before:,} -> {before + done:,} files in {args.seconds:.0f} s; {load_average()}")
    named = sorted(
        {name for window in windows for name in window.functions}, key=lambda name: -windows[-1].functions.get(name, 0)
    )
    print("\nPostgreSQL's CPU, ms a file indexed in the window")
    print(f"{'function':<40}" + "".join(f"{window.label:>16}" for window in windows))
    for name in named[: args.top]:
        cells = "".join(f"{1000 * w.cpu_seconds * w.functions.get(name, 0) / max(1, w.files):>16.2f}" for w in windows)
        print(f"{name[:40]:<40}{cells}")
    print(f"{'in all':<40}" + "".join(f"{1000 * w.cpu_seconds / max(1, w.files):>16.2f}" for w in windows))


if __name__ == "__main__":
    main()

"""Where PostgreSQL's backends are busy while something else runs: pg_stat_activity, polled.

Run it beside a bench (e.g. ``ingest_scale.py --files 30000``, started first): every ``--every``
seconds it reads the active backends of the databases whose name starts with ``--databases``, and
at the end splits the polls into quarters of the window in which a statement starting with
``--window`` was seen (default: the chunks' COPY, i.e. the indexing). Per quarter and statement (its
first 70 characters, numbers folded) and what it waited on: seconds of backend activity (polls
seen x the quarter's length / its polls), busiest first.

    .venv/bin/python bench/ingest/backend_activity.py --seconds 1500 [--every 0.02]
        [--databases bench_ingest_scale] [--window "COPY library_chunk"]
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

import psycopg

from bench.common.machine import cpu, load_average
from bench.common.scratch import database_url

_ACTIVE = (
    "SELECT query, coalesce(wait_event_type, 'CPU'), backend_type FROM pg_stat_activity"
    " WHERE datname LIKE %s AND state = 'active' AND pid <> pg_backend_pid()"
)
Sample = tuple[float, str, str]


def poll(seconds: float, every: float, databases: str) -> list[Sample]:
    samples: list[Sample] = []
    end = time.monotonic() + seconds
    with psycopg.connect(database_url("postgres"), autocommit=True) as connection:
        while time.monotonic() < end:
            now = time.monotonic()
            for query, waited, backend in connection.execute(_ACTIVE, [databases + "%"]).fetchall():
                what = (
                    re.sub(r"\s+", " ", re.sub(r"\d+", "N", query or ""))[:70]
                    if backend == "client backend"
                    else backend
                )
                samples.append((now, what, waited))
            time.sleep(every)
    return samples


def quarters(samples: list[Sample], window: str, top: int) -> None:
    seen = [t for t, what, _ in samples if what.startswith(window)]
    if not seen:
        raise SystemExit(f"no statement starting with {window!r} was seen")
    start, span = min(seen), (max(seen) - min(seen)) / 4
    counts = [collections.Counter[tuple[str, str]]() for _ in range(4)]
    polls: list[set[float]] = [set() for _ in range(4)]
    for t, what, waited in samples:
        if start <= t <= start + 4 * span:
            quarter = min(3, int((t - start) // span))
            polls[quarter].add(t)
            counts[quarter][(what, waited)] += 1
    scale = [span / max(1, len(p)) for p in polls]
    total = collections.Counter[tuple[str, str]]()
    for quarter in counts:
        total.update(quarter)
    print(f"window {4 * span:.0f} s, quarters of {span:.0f} s; polls {[len(p) for p in polls]}")
    print("seconds of backend activity by quarter | waited on | statement")
    for key, _ in total.most_common(top):
        cells = " ".join(f"{counts[q][key] * scale[q]:>6.1f}" for q in range(4))
        print(f"{cells} | {key[1]:<8} | {key[0]}")
    print(" ".join(f"{sum(counts[q].values()) * scale[q]:>6.1f}" for q in range(4)) + " | in all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--every", type=float, default=0.02)
    parser.add_argument("--databases", default="bench_ingest_scale", help="database name prefix")
    parser.add_argument("--window", default="COPY library_chunk", help="the statement that marks the window")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    print(f"{cpu()}\n{load_average()}", flush=True)
    samples = poll(args.seconds, args.every, args.databases)
    print(load_average())
    quarters(samples, args.window, args.top)


if __name__ == "__main__":
    main()

"""Scratch services for the search benchmarks: their own database and Redis db, never the dev data.

``use_scratch_services("bench_search_quality")`` creates the database when missing (it is kept
between runs, so loaded corpora are reused), points Django at it, migrates it and sets Django
up. Drop one with ``DROP DATABASE bench_search_...`` when done.
"""

from __future__ import annotations

import statistics

from scratch import kept_database

SCRATCH_REDIS_DB = 10


def use_scratch_services(database_name: str, *, embedding_provider: str = "local") -> None:
    if not database_name.startswith("bench_search"):
        raise SystemExit(f"refusing to use {database_name!r}: search benchmarks only use bench_search* databases")
    kept_database(database_name, redis_db=SCRATCH_REDIS_DB, EMBEDDING_PROVIDER=embedding_provider, LOG_LEVEL="WARNING")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[round(q) - 1]

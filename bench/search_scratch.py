"""Scratch services for the search benchmarks: their own database and Redis db, never the dev data.

``use_scratch_services("bench_search_quality")`` creates the database when missing (it is kept
between runs, so loaded corpora are reused), points Django at it, migrates it and sets Django
up. Drop one with ``DROP DATABASE bench_search_...`` when done.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path
from urllib.parse import urlparse, urlunparse

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

SCRATCH_REDIS_DB = 10


def use_scratch_services(database_name: str, *, embedding_provider: str = "local") -> None:
    import psycopg

    from config.env import env_str

    if not database_name.startswith("bench_search"):
        raise SystemExit(f"refusing to use {database_name!r}: search benchmarks only use bench_search* databases")
    database = urlparse(env_str("DATABASE_URL"))
    with psycopg.connect(urlunparse(database._replace(path="/postgres")), autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database_name]).fetchone():
            admin.execute(f'CREATE DATABASE "{database_name}"')
    redis_url = urlparse(env_str("REDIS_URL", "redis://127.0.0.1:6379/0"))
    os.environ.update(
        DATABASE_URL=urlunparse(database._replace(path=f"/{database_name}")),
        REDIS_URL=urlunparse(redis_url._replace(path=f"/{SCRATCH_REDIS_DB}")),
        DJANGO_SETTINGS_MODULE="config.settings",
        EMBEDDING_PROVIDER=embedding_provider,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        LOG_LEVEL="WARNING",
    )
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[round(q) - 1]

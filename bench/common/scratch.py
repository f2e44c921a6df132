"""Scratch services for the benchmarks: never the development data.

``scratch_services``: a new database, migrated and dropped afterwards, and a Redis db flushed
afterwards. ``kept_database``: a named database kept between runs, for corpora slow to load.
Import this module before Django: it points DATABASE_URL and REDIS_URL at the scratch services.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator
from urllib.parse import urlparse, urlunparse

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from config.env import env_str

# Benchmarks publish progress events and may queue tasks: keep them away from a running stack.
BENCH_REDIS_DB = 15


def _with_path(url: str, path: str) -> str:
    return urlunparse(urlparse(url)._replace(path=path))


def kept_database(name: str, *, redis_db: int, **env: str) -> None:
    """Point Django at database ``name`` (created when missing and kept between runs, so a loaded
    corpus is reused) and at Redis db ``redis_db``, with ``env`` on top; set Django up and migrate."""
    import psycopg

    with psycopg.connect(database_url("postgres"), autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            admin.execute(f'CREATE DATABASE "{name}"')
    _use(database_url=database_url(name), redis_url=scratch_redis_url(redis_db), env=env)


@contextlib.contextmanager
def scratch_services(prefix: str, *, redis_db: int = BENCH_REDIS_DB, **env: str) -> Iterator[str]:
    """A new database (dropped afterwards) and Redis db ``redis_db`` (flushed afterwards) for Django."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    admin = database_url("postgres")
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f'CREATE DATABASE "{name}"')
    redis_url = scratch_redis_url(redis_db)
    try:
        started = time.monotonic()
        _use(database_url=database_url(name), redis_url=redis_url, env=env)
        print(f"scratch database {name} migrated in {time.monotonic() - started:.1f} s; {_load()}")
        yield name
        print(f"done; {_load()}")
    finally:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(admin, autocommit=True) as db:
            db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        import redis

        redis.Redis.from_url(redis_url).flushdb()


def database_url(name: str) -> str:
    """DATABASE_URL with database ``name`` (``postgres`` to create, drop or list databases)."""
    base = env_str("DATABASE_URL")
    if not base:
        raise SystemExit("DATABASE_URL is not set and var/services.env is missing: run `make services` first.")
    return _with_path(base, f"/{name}")


def scratch_redis_url(db: int) -> str:
    """REDIS_URL with database `db`."""
    return _with_path(env_str("REDIS_URL", "redis://127.0.0.1:6379/0"), f"/{db}")


def _use(*, database_url: str, redis_url: str, env: dict[str, str]) -> None:
    # Environment, not settings: servers and workers a bench starts inherit it.
    os.environ.update(DATABASE_URL=database_url, REDIS_URL=redis_url, DJANGO_SETTINGS_MODULE="config.settings", **env)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"

"""Waiting for something another process brings about (a worker, a server, a watcher): one poll loop."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    condition: Callable[[], T],
    *,
    what: str,
    timeout: float = 60,
    interval: float = 0.05,
    process: subprocess.Popen[bytes] | None = None,
) -> T:
    """Poll until ``condition`` returns something true and return it; fail after ``timeout`` seconds,
    or at once if ``process``, which should bring it about, has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"process exited while waiting for {what}")
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


_BUSY_SESSIONS = """
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()
  AND backend_type = 'client backend' AND state <> 'idle'"""


def database_sessions_settled(database_url: str, *, timeout: float = 10, quiet: float = 0.5) -> None:
    """Wait (at most ``timeout`` seconds, then go on) until no other session of the database has
    been inside a statement or a transaction for ``quiet`` seconds. A server may still be answering
    requests a closed page sent; the flush after a test would then TRUNCATE while those requests
    hold their tables' locks, and PostgreSQL breaks the deadlock by failing the flush. One idle
    moment is not enough: a page's last requests can arrive just after it (seen once in CI)."""
    import psycopg

    deadline = time.monotonic() + timeout
    idle_since: float | None = None
    with psycopg.connect(database_url, autocommit=True) as connection:
        while time.monotonic() < deadline:
            row = connection.execute(_BUSY_SESSIONS).fetchone()
            if row is not None and row[0] == 0:
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since >= quiet:
                    return
            else:
                idle_since = None
            time.sleep(0.05)

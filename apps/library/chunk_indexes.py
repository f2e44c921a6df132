"""The chunk table's indexes built and dropped while the product runs, and the short-lock plumbing
they share with the table move (apps/library/chunk_partitions.py).

Searches and writers use ``library_chunk`` all the time, so a statement that locks it runs in a
transaction of its own that gives up a lock wait after ``LOCK_TIMEOUT`` (``brief_transaction``,
``execute_briefly``) and is run again when it gave up (``with_lock_retries``). The index steps live
here rather than beside the move because a migration that replaces one index (library/0017) calls
them as well as the move's index step, and the plumbing lives with them so that this module
imports nothing of the move.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.utils import OperationalError

TABLE = "library_chunk"
# Lock waits of the short transactions (a copy batch, the swap, an index attached or dropped) stay
# below PostgreSQL's deadlock_timeout (1 s): when one closes a cycle with a product transaction,
# the move or the migration gives up and retries, never the product.
LOCK_TIMEOUT = "200ms"
LOCK_ATTEMPTS = 100
_RETRY_PAUSE_SECONDS = 0.05


@dataclass(frozen=True)
class ChunkIndex:
    name: str  # on the table; a partition's copy is named after the partition
    definition: str  # what follows ``ON <table>``: ``USING gin (search_vector)``, ``(id) WHERE ...``


def chunk_index_build(*, index: ChunkIndex, table: str = TABLE, name: str = "") -> None:
    """``index`` on ``table`` (named ``name``, by default its own) while writers go on; call it
    outside a transaction. On a partitioned table, as PostgreSQL documents for partitioned indexes:
    the parent's index created ``ON ONLY`` the parent (invalid until complete), then each
    partition's built ``CONCURRENTLY`` and attached to it. A valid index of that name is kept;
    what an interrupted build left is dropped first, so a build that stopped is run again."""
    name = name or index.name
    partitions = _partitions(table)
    existing = sql_fetch("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", [name])
    if existing and existing[0][0]:
        return
    if existing:
        chunk_index_drop(name=name)
    if partitions is None:
        sql_execute(f"CREATE INDEX CONCURRENTLY {name} ON {table} {index.definition}")
        return
    # Creating and attaching take short locks on the live table: under the lock timeout, retried.
    with_lock_retries(functools.partial(execute_briefly, f"CREATE INDEX {name} ON ONLY {table} {index.definition}"))
    for partition in partitions:
        child = partition_index_name(partition, index.name)
        sql_execute(f"DROP INDEX CONCURRENTLY IF EXISTS {child}")  # an interrupted build's, never attached
        sql_execute(f"CREATE INDEX CONCURRENTLY {child} ON {partition} {index.definition}")
        with_lock_retries(functools.partial(execute_briefly, f"ALTER INDEX {name} ATTACH PARTITION {child}"))


def chunk_index_drop(*, name: str) -> None:
    """Drop an index of the table, if there. A partitioned index cannot be dropped ``CONCURRENTLY``:
    it goes in one short transaction holding the table's ACCESS EXCLUSIVE lock, under the lock
    timeout, retried until searches and writes let it through."""
    kind = sql_fetch("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [name])
    if not kind:
        return
    if kind[0][0] == "I":  # partitioned
        with_lock_retries(functools.partial(execute_briefly, f"DROP INDEX IF EXISTS {name}"))
    else:
        sql_execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")


def partition_index_name(partition: str, index: str) -> str:
    """A partition's copy of a table index: ``library_chunk_p03`` + ``library_chunk_id`` -> ``library_chunk_p03_id``."""
    return f"{partition}_{index.removeprefix(TABLE + '_')}"


# -- plumbing ------------------------------------------------------------------------------------


def with_lock_retries(step: Callable[[], None]) -> int:
    """Run a short transaction that takes locks, again while they time out; returns the retries."""
    for attempt in range(LOCK_ATTEMPTS):
        try:
            step()
            return attempt
        except OperationalError as error:
            if not _is_lock_conflict(error) or attempt == LOCK_ATTEMPTS - 1:
                raise
            time.sleep(_RETRY_PAUSE_SECONDS)
    raise AssertionError("unreachable")


@contextlib.contextmanager
def brief_transaction() -> Iterator[None]:
    """A transaction of its own that gives up a lock wait after LOCK_TIMEOUT."""
    with transaction.atomic():
        sql_execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        yield


def execute_briefly(*statements: str) -> None:
    """``statements`` in one ``brief_transaction``: all or none take effect, so an attempt that
    timed out can be run again whole."""
    with brief_transaction():
        for sql in statements:
            sql_execute(sql)


def sql_execute(sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def sql_fetch(sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _partitions(table: str) -> list[str] | None:
    """A partitioned table's partitions, by name; None for a plain table."""
    if not sql_fetch("SELECT 1 FROM pg_partitioned_table WHERE partrelid = %s::regclass", [table]):
        return None
    rows = sql_fetch(
        "SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = %s::regclass ORDER BY 1", [table]
    )
    return [row[0] for row in rows]


def _is_lock_conflict(error: OperationalError) -> bool:
    # 55P03 lock_not_available (lock_timeout), 40P01 deadlock_detected.
    return getattr(error.__cause__, "sqlstate", None) in {"55P03", "40P01"}

"""The chunk table's layout, and moving its rows to another layout while the product runs.

``library_chunk`` is hash-partitioned by ``folder_id`` (``PARTITIONS`` partitions): each partition
has its own heap, HNSW graph, GIN index and btrees, so a search, which names its folder, reads one
partition (apps/library/vector_index.py says why that matters for HNSW). A file belongs to one
folder, so a file's chunks share a partition.

``chunk_table_move`` rebuilds the table in another layout (another partition count, or one plain
table) without stopping writers or readers:

1. ``library_chunk_next`` is created in the new layout beside the table (columns, checks, foreign
   keys copied from it), and statement triggers on the table mirror every insert, update, delete
   and truncate into it from then on;
2. the rows older than the triggers are copied in short batches by id (``FOR SHARE``, so a row
   deleted or updated meanwhile is either copied before the writer touches it or skipped and
   mirrored by the writer's trigger; ``ON CONFLICT DO NOTHING`` for rows the triggers brought);
3. the new table's search indexes are built ``CONCURRENTLY`` partition by partition (the triggers
   keep writing) and attached to the parent's indexes (``chunk_index_build``,
   apps/library/chunk_indexes.py, which a migration replacing one index of the table calls too);
4. one short transaction locks the table (and the tables its foreign keys reference, whose
   triggers the drop removes), drops it, renames the new table and its partitions and indexes to
   the final names, gives ``id`` an identity sequence continuing the old one, and recreates the
   table's own triggers (the tsvector trigger).

Steps 1, 2 and 4 and each index attach are short transactions that give up a lock wait quickly
and are retried (``brief_transaction``, apps/library/chunk_indexes.py), so searches and writers
never queue behind the move for long.

A move that stopped half way is started again from scratch: step 1 drops what it left.
An empty table (a new database) gets its indexes at step 1 and moves at once.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache
from django.db import connection

from apps.library import vector_index
from apps.library.chunk_indexes import (
    TABLE,
    ChunkIndex,
    brief_transaction,
    chunk_index_build,
    execute_briefly,
    partition_index_name,
    sql_execute,
    sql_fetch,
    with_lock_retries,
)

PARTITIONS = 16
# Each partition is a table with five indexes: past a few hundred, planning and catalog reads cost
# more than the smaller partitions save.
MAX_PARTITIONS = 256
# Searches cache which partition holds a folder (apps/search/planning.py) under this version; a
# move renames the partitions, so it changes the version and every process looks again.
LAYOUT_VERSION_KEY = "library:chunk-layout-version"
NEXT = "library_chunk_next"
# Django's name for the index of the ``file`` foreign key (kept so its state still matches).
FILE_INDEX = "library_chunk_file_id_6e0514c0"
COPY_BATCH_ROWS = 2000
_MIRROR_FUNCTION = "library_chunk_next_mirror"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChunkLayout:
    partitions: int | None  # hash partitions by folder_id; None: one plain table
    primary_key: tuple[str, ...]
    unique: tuple[str, ...]  # the ``chunk_unique_index`` constraint
    indexes: tuple[ChunkIndex, ...]


def partitioned_layout(*, partitions: int = PARTITIONS) -> ChunkLayout:
    """Hash partitions by folder. A unique key of a partitioned table holds its partition key, so
    ``id`` is unique with ``folder_id`` and a plain btree serves lookups by id alone. HNSW is over
    ``halfvec`` with pgvector's defaults (m 16, ef_construction 64; apps/library/vector_index.py)."""
    if not 1 <= partitions <= MAX_PARTITIONS:
        raise ValueError(f"partitions must be between 1 and {MAX_PARTITIONS}")
    return ChunkLayout(
        partitions=partitions,
        primary_key=("folder_id", "id"),
        unique=("folder_id", "file_id", "chunk_index"),
        indexes=(
            ChunkIndex(vector_index.INDEX, vector_index.DEFINITION),
            ChunkIndex("library_chunk_search_vector_gin", "USING gin (search_vector)"),
            ChunkIndex("library_chunk_search_vector_null", "(id) WHERE search_vector IS NULL"),
            ChunkIndex(FILE_INDEX, "(file_id)"),
            ChunkIndex("library_chunk_id", "(id)"),
        ),
    )


@dataclass
class MoveReport:
    rows_copied: int = 0
    batches: int = 0
    retries: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def chunk_table_move(*, layout: ChunkLayout, batch_rows: int = COPY_BATCH_ROWS) -> MoveReport:
    """Move ``library_chunk`` into ``layout``; call outside a transaction (indexes build concurrently)."""
    if connection.in_atomic_block:
        raise RuntimeError("chunk_table_move builds indexes concurrently: call it outside a transaction")
    report = MoveReport()
    started = time.monotonic()
    columns = _columns()
    empty = not sql_fetch(f"SELECT EXISTS (SELECT 1 FROM {TABLE})")[0][0]  # noqa: S608 - names are constants
    _abandon_next()
    report.retries += with_lock_retries(lambda: _create_next(layout, columns=columns, with_indexes=empty))
    report.seconds["create"] = _lap(started)
    logger.info("%s created (%s), writes mirrored", NEXT, _describe(layout))
    if not empty:
        _copy_rows(columns=columns, batch_rows=batch_rows, report=report)
        report.seconds["copy"] = _lap(started) - sum(report.seconds.values())
        _build_indexes(layout)
        report.seconds["indexes"] = _lap(started) - sum(report.seconds.values())
    report.retries += with_lock_retries(lambda: _swap(layout))
    cache.set(LAYOUT_VERSION_KEY, uuid.uuid4().hex, timeout=None)
    report.seconds["swap"] = _lap(started) - sum(report.seconds.values())
    sql_execute(f"ANALYZE {TABLE}")
    report.seconds["total"] = _lap(started)
    logger.info("%s is now %s: %s", TABLE, _describe(layout), report)
    return report


def chunk_layout_version() -> str:
    return str(cache.get(LAYOUT_VERSION_KEY) or "0")


@dataclass(frozen=True)
class PartitionSize:
    name: str
    rows: int  # the planner's estimate (pg_class.reltuples): exact counts would read every partition
    bytes: int  # heap, TOAST and indexes


def chunk_partition_sizes() -> list[PartitionSize]:
    """``library_chunk``'s partitions in order; empty for a plain table."""
    rows = sql_fetch(
        "SELECT c.relname, greatest(c.reltuples, 0)::bigint, pg_total_relation_size(c.oid)"
        " FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
        " WHERE i.inhparent = %s::regclass ORDER BY length(c.relname), c.relname",
        [TABLE],
    )
    return [PartitionSize(name=name, rows=count, bytes=size) for name, count, size in rows]


def partition_name(remainder: int) -> str:
    return f"{TABLE}_p{remainder:02d}"


# -- steps ---------------------------------------------------------------------------------------


def _describe(layout: ChunkLayout) -> str:
    return "one plain table" if layout.partitions is None else f"{layout.partitions} hash partitions by folder"


def _lap(started: float) -> float:
    return round(time.monotonic() - started, 2)


def _columns() -> list[str]:
    rows = sql_fetch(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
        " ORDER BY attnum",
        [TABLE],
    )
    return [row[0] for row in rows]


def _abandon_next() -> None:
    """Drop what an interrupted move left behind (its triggers go with their function)."""
    (left,) = sql_fetch(
        "SELECT to_regclass(%s) IS NOT NULL OR to_regprocedure(%s) IS NOT NULL", [NEXT, f"{_MIRROR_FUNCTION}()"]
    )[0]
    if left:
        drop_function = f"DROP FUNCTION IF EXISTS {_MIRROR_FUNCTION}() CASCADE"
        with_lock_retries(functools.partial(execute_briefly, drop_function, f"DROP TABLE IF EXISTS {NEXT}"))


def _temporary(name: str) -> str:
    return f"{name}_next"


def _next_partition(remainder: int) -> str:
    return f"{NEXT}_p{remainder:02d}"


def _create_next(layout: ChunkLayout, *, columns: list[str], with_indexes: bool) -> None:
    """The new table with its keys, checks and foreign keys, and the triggers mirroring writes into it."""
    partitioning = "" if layout.partitions is None else " PARTITION BY HASH (folder_id)"
    key, unique = ", ".join(layout.primary_key), ", ".join(layout.unique)
    options = _leaf_options()
    foreign_keys = sql_fetch(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = %s::regclass AND contype = 'f' AND conparentid = 0 ORDER BY conname",
        [TABLE],
    )
    with brief_transaction():
        # Identity comes at the swap, continuing the table's sequence; until then ids are copied.
        sql_execute(
            f"CREATE TABLE {NEXT} (LIKE {TABLE} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE,"
            f" CONSTRAINT {_temporary(TABLE + '_pkey')} PRIMARY KEY ({key}),"
            f" CONSTRAINT {_temporary('chunk_unique_index')} UNIQUE ({unique})){partitioning}"
            f"{options if layout.partitions is None else ''}"
        )
        for remainder in range(layout.partitions or 0):
            sql_execute(
                f"CREATE TABLE {_next_partition(remainder)} PARTITION OF {NEXT}"
                f" FOR VALUES WITH (modulus {layout.partitions}, remainder {remainder}){options}"
            )
        for name, definition in foreign_keys:
            sql_execute(f"ALTER TABLE {NEXT} ADD CONSTRAINT {name} {definition}")
        if with_indexes:
            for index in layout.indexes:
                sql_execute(f"CREATE INDEX {_temporary(index.name)} ON {NEXT} {index.definition}")
        _create_mirror(columns)


def _leaf_options() -> str:
    """The storage parameters of the table's heaps (search/0002's toast_tuple_target), as a WITH
    clause: a partitioned table keeps them on its partitions."""
    rows = sql_fetch(
        "SELECT c.reloptions FROM pg_class c WHERE c.oid = %s::regclass AND c.relkind = 'r'"
        " UNION ALL (SELECT c.reloptions FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
        " WHERE i.inhparent = %s::regclass ORDER BY c.relname LIMIT 1)",
        [TABLE, TABLE],
    )
    options = rows[0][0] if rows else None
    return f" WITH ({', '.join(options)})" if options else ""


def _create_mirror(columns: list[str]) -> None:
    listed = ", ".join(columns)
    sql_execute(
        f"""
CREATE FUNCTION {_MIRROR_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        TRUNCATE {NEXT};
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM {NEXT} n USING old_rows o WHERE n.folder_id = o.folder_id AND n.id = o.id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO {NEXT} ({listed}) SELECT {listed} FROM new_rows;
    END IF;
    RETURN NULL;
END
$$"""  # noqa: S608 - the table's own column names
    )
    transitions = {
        "insert": "REFERENCING NEW TABLE AS new_rows",
        "update": "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
        "delete": "REFERENCING OLD TABLE AS old_rows",
        "truncate": "",
    }
    for event, referencing in transitions.items():
        sql_execute(
            f"CREATE TRIGGER {NEXT}_mirror_{event} AFTER {event.upper()} ON {TABLE} {referencing}"
            f" FOR EACH STATEMENT EXECUTE FUNCTION {_MIRROR_FUNCTION}()"
        )


def _copy_rows(*, columns: list[str], batch_rows: int, report: MoveReport) -> None:
    """Rows written before the triggers, by id; those written since are mirrored already."""
    (upto,) = sql_fetch(f"SELECT coalesce(max(id), 0) FROM {TABLE}")[0]  # noqa: S608
    listed = ", ".join(columns)
    batch_sql = f"""
WITH batch AS MATERIALIZED (
    SELECT {listed} FROM {TABLE} WHERE id > %(after)s AND id <= %(upto)s ORDER BY id LIMIT %(size)s FOR SHARE
),
copied AS (INSERT INTO {NEXT} ({listed}) SELECT {listed} FROM batch ON CONFLICT DO NOTHING)
SELECT max(id), count(*) FROM batch"""  # noqa: S608 - the table's own column names
    after = 0
    while True:
        last, rows, retries = _copy_batch(batch_sql, {"after": after, "upto": upto, "size": batch_rows})
        report.retries += retries
        if last is None:
            return
        after, report.rows_copied, report.batches = last, report.rows_copied + rows, report.batches + 1
        if report.batches % 50 == 0:
            logger.info("copied %s rows, up to id %s of %s", report.rows_copied, after, upto)


def _copy_batch(sql: str, params: dict[str, int]) -> tuple[int | None, int, int]:
    """The batch's last id (None past the end), its rows, and the lock retries it took."""
    result: list[tuple[Any, ...]] = []

    def run() -> None:
        with brief_transaction():
            result[:] = sql_fetch(sql, params)

    retries = with_lock_retries(run)
    last, rows = result[0]
    return last, rows, retries


def _build_indexes(layout: ChunkLayout) -> None:
    """Each index built CONCURRENTLY (writes keep being mirrored), on each partition then attached."""
    for index in layout.indexes:
        started = time.monotonic()
        chunk_index_build(index=index, table=NEXT, name=_temporary(index.name))
        logger.info("%s built in %.1f s", index.name, time.monotonic() - started)


def _swap(layout: ChunkLayout) -> None:
    with brief_transaction():
        # Dropping the table drops its foreign keys' triggers on the tables they reference, which
        # takes those tables' ACCESS EXCLUSIVE lock: taken here, in one order, under the timeout.
        referenced = [row[0] for row in sql_fetch(_REFERENCED, [TABLE])]
        sql_execute(f"LOCK TABLE {', '.join([TABLE, NEXT, *referenced])} IN ACCESS EXCLUSIVE MODE")
        triggers = [row[0] for row in sql_fetch(_OWN_TRIGGERS, [TABLE, f"{NEXT}_mirror_%"])]
        sequence = sql_fetch("SELECT pg_get_serial_sequence(%s, 'id')", [TABLE])[0][0]
        # The identity sequence, as PostgreSQL names it.
        last_value, is_called = (
            sql_fetch(f"SELECT last_value, is_called FROM {sequence}")[0] if sequence else (1, False)  # noqa: S608
        )
        sql_execute(f"DROP TABLE {TABLE}")
        sql_execute(f"DROP FUNCTION {_MIRROR_FUNCTION}()")
        sql_execute(f"ALTER TABLE {NEXT} RENAME TO {TABLE}")
        for remainder in range(layout.partitions or 0):
            sql_execute(f"ALTER TABLE {_next_partition(remainder)} RENAME TO {partition_name(remainder)}")
        _rename_indexes()
        sql_execute(
            f"ALTER TABLE {TABLE} ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (SEQUENCE NAME {TABLE}_id_seq)"
        )
        sql_execute("SELECT setval(pg_get_serial_sequence(%s, 'id'), %s, %s)", [TABLE, last_value, is_called])
        for definition in triggers:
            sql_execute(definition)


_REFERENCED = """
SELECT DISTINCT confrelid::regclass::text FROM pg_constraint
WHERE conrelid = %s::regclass AND contype = 'f' AND conparentid = 0
ORDER BY 1"""
_OWN_TRIGGERS = """
SELECT pg_get_triggerdef(oid) FROM pg_trigger
WHERE tgrelid = %s::regclass AND NOT tgisinternal AND tgparentid = 0 AND tgname NOT LIKE %s
ORDER BY tgname"""
# The renamed table's indexes, and each partition's index with the table's index it is attached to.
_INDEXES = """
SELECT i.indexrelid::regclass::text, i.indrelid::regclass::text, parent.inhparent::regclass::text
FROM pg_index i
LEFT JOIN pg_inherits parent ON parent.inhrelid = i.indexrelid
WHERE i.indrelid = %s::regclass
   OR i.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = %s::regclass)"""


def _rename_indexes() -> None:
    """Temporary names to final ones: ``x_next`` to ``x`` on the table, ``<partition>_<x>`` on a
    partition (renaming a constraint's index renames the constraint)."""
    rows = sql_fetch(_INDEXES, [TABLE, TABLE])
    for index, table, _parent in rows:
        if table == TABLE:
            sql_execute(f"ALTER INDEX {index} RENAME TO {index.removesuffix('_next')}")
    for index, table, parent in rows:
        if table != TABLE and parent is not None:
            sql_execute(f"ALTER INDEX {index} RENAME TO {partition_index_name(table, parent.removesuffix('_next'))}")

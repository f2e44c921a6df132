"""The chunk table's layout before the hash partitions, and its search, for bench/search/search_speed.py.

Up to d2470bb ``library_chunk`` was one plain table with 16 partial HNSW indexes, ``WHERE
(folder_id % 16) = b`` (library/0006), beside a table-wide GIN and the folder btree; library/0015's
``PLAIN`` layout is that table's definition, used here as it is. ``buckets_load`` copies the
partitioned table's rows, in id order (the order search_speed.py's load wrote them, files of all
folders interleaved), into such a table named ``bench_chunk_buckets``, so both layouts hold the
same rows with the same ids.

``bucket_search`` is the search statement as of d2470bb, kept here because the product no longer
has it: a layout is only measured with the statement written for it (the bucket condition is what
let the planner pick a partial index), and issue 40 asks for the figures beside each other. It is
built from the product's statement with the three differences the partitions brought undone, so
both designs share every other change to the ranking: the vector leg names the folder's bucket,
the keyword leg reads the whole table's GIN index (not the folder's partition), and the final join
finds chunks by id alone; and the vector leg orders by the ``vector`` distance again, which the
bucket indexes are over (the product's index is over ``halfvec`` since library/0017). Planning as
of d2470bb too: the graph a folder's HNSW search reads is its bucket (counted through the folder
btree), the GIN index holds the whole table. When written, the
statement built here was the text of d2470bb's ``chunk_statement`` (library_chunk renamed) for all
27 shapes without filters; ``_undone`` and ``bucket_statement`` stop the bench if the product's
statement no longer has what they undo.
"""

from __future__ import annotations

import functools
import importlib
import re
import time
from typing import TYPE_CHECKING, Any

from apps.library.vector_index import HALFVEC
from bench.search.search_speed_load import execute

if TYPE_CHECKING:
    from apps.search.planning import VectorPlan
    from apps.search.statements import StatementShape

COMMIT = "d2470bb"
TABLE = "bench_chunk_buckets"
BUCKETS = 16
# Library/0015's PLAIN: library_chunk as migrations 0001-0014 left it.
PLAIN = importlib.import_module("apps.library.migrations.0015_chunk_partitions").PLAIN
INDEXES = {
    index.name.replace("library_chunk", TABLE, 1): f"CREATE INDEX {index.name.replace('library_chunk', TABLE, 1)} "
    f"ON {TABLE} {index.definition}"
    for index in PLAIN.indexes
}


def buckets_load() -> dict:
    """``bench_chunk_buckets`` filled from ``library_chunk``, then indexed as d2470bb had it (timed)."""
    timings: dict[str, Any] = {}
    execute(f"DROP TABLE IF EXISTS {TABLE}")
    # The heaps' storage parameters (search/0002's toast_tuple_target), as the partitions have them.
    (options,) = execute(
        "SELECT c.reloptions FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
        " WHERE i.inhparent = 'library_chunk'::regclass ORDER BY c.relname LIMIT 1"
    )[0]
    execute(
        f"CREATE TABLE {TABLE} (LIKE library_chunk INCLUDING DEFAULTS INCLUDING STORAGE)"
        + (f" WITH ({', '.join(options)})" if options else "")
    )
    # The keys exist while rows are written, as they do on the partitioned table during its COPY.
    execute(
        f"ALTER TABLE {TABLE} ADD PRIMARY KEY ({', '.join(PLAIN.primary_key)}), ADD UNIQUE ({', '.join(PLAIN.unique)})"
    )
    started = time.perf_counter()
    execute(f"INSERT INTO {TABLE} SELECT * FROM library_chunk ORDER BY id")
    (rows,) = execute(f"SELECT count(*) FROM {TABLE}")[0]
    timings["chunks"] = {"rows": rows, "seconds": round(time.perf_counter() - started, 1), "how": "INSERT SELECT"}
    execute("SET maintenance_work_mem = '6GB'")
    for name, ddl in INDEXES.items():
        started = time.perf_counter()
        execute(ddl)
        timings[name] = round(time.perf_counter() - started, 1)
        print(f"  {name}: built in {timings[name]} s", flush=True)
    started = time.perf_counter()
    execute(f"VACUUM ANALYZE {TABLE}")
    timings["vacuum_analyze"] = round(time.perf_counter() - started, 1)
    return timings


def bucket_search(*, folder_id: int, query: str, k: int, mode: str, query_vector: Any, iterative: bool) -> list[int]:
    """Chunk ids of the folder's top ``k`` through the statement as of d2470bb (``selectors.chunk_search``
    then, without filters), on ``bench_chunk_buckets``."""
    # The product after Django is set up (search_speed.py imports this module before).
    from apps.search import planning, selectors
    from apps.search.statements import VectorMethod
    from apps.search.types import SearchMode

    question = selectors._question(query=query, k=k, mode=SearchMode(mode), filters=None, query_vector=query_vector)
    if question is None:
        return []
    folder_rows = planning.folder_chunk_count(folder_id=folder_id)
    plan = (
        bucket_vector_plan(folder_id=folder_id, folder_rows=folder_rows, k=k, depth=question.depth, iterative=iterative)
        if question.embedding is not None
        else planning.VectorPlan(VectorMethod.EXACT)
    )
    keyword_plan = planning.keyword_plan(folder_rows=folder_rows, partition_rows=table_rows())
    shape = question.shape(vector_method=plan.method, keyword_method=keyword_plan.method)
    params = selectors._params(
        folder_id=folder_id,
        question=question,
        k=k,
        posting_scale=keyword_plan.posting_scale,
        rrf_k=None,
        weights=(1.0, 1.0),
        row_budget=keyword_plan.row_budget,
    )
    params.update(vector_buckets=BUCKETS, vector_bucket=folder_id % BUCKETS)
    return [row[0] for row in selectors._run(bucket_statement(shape), params, plan=plan)]


def bucket_vector_plan(*, folder_id: int, folder_rows: int, k: int, depth: int, iterative: bool) -> VectorPlan:
    """d2470bb's ``planning.folder_vector_plan``: the graph is the folder's bucket."""
    from apps.search import planning

    graph_rows = _bucket_rows(folder_id % BUCKETS) if folder_rows > planning.EXACT_MAX_ROWS else folder_rows
    return planning.vector_plan(
        folder_rows=folder_rows, graph_rows=graph_rows, k=k, depth=depth, iterative_scans=iterative
    )


@functools.cache
def _bucket_rows(bucket: int) -> int:
    (rows,) = execute(
        f"SELECT count(*) FROM {TABLE} WHERE folder_id = ANY(ARRAY("
        "SELECT id FROM library_folder WHERE id %% %s = %s)) AND embedding IS NOT NULL",
        [BUCKETS, bucket],
    )[0]
    return int(rows)


@functools.cache
def table_rows() -> int:
    (rows,) = execute(f"SELECT reltuples::bigint FROM pg_class WHERE oid = '{TABLE}'::regclass")[0]
    return int(rows)


_VECTOR_INDEXED = re.compile(r"(vector_indexed AS MATERIALIZED \(.*?WHERE c\.folder_id = %\(folder_id\)s)", re.S)
_BUCKET = " AND (c.folder_id %% %(vector_buckets)s) = %(vector_bucket)s"
# The product's HNSW leg orders by its index's halfvec expression (apps/search/statements.py).
_HALFVEC_ORDER = (
    f"ORDER BY c.embedding::{HALFVEC} <=> %(embedding)s::{HALFVEC}",
    "ORDER BY c.embedding <=> %(embedding)s::vector",
)
_FINAL_JOIN = (
    "JOIN library_chunk c ON c.folder_id = %(folder_id)s AND c.id = fu.chunk_id",
    "JOIN library_chunk c ON c.id = fu.chunk_id",
)


def bucket_statement(shape: StatementShape) -> str:
    """The statement as of d2470bb for ``shape``, on ``bench_chunk_buckets``."""
    from apps.search.statements import VectorMethod, chunk_statement

    sql = _undone(chunk_statement(shape), *_FINAL_JOIN)
    if shape.vector and shape.vector_method is not VectorMethod.EXACT:
        sql, found = _VECTOR_INDEXED.subn(lambda match: match[1] + _BUCKET, sql)
        if found != 1:
            raise SystemExit("the product's HNSW leg changed: rewrite bench/search/search_speed_buckets.py")
        sql = _undone(sql, *_HALFVEC_ORDER)
    # With no partition in the shape, the keyword leg reads "library_chunk", quoted as a partition is.
    return re.sub(r'"?\blibrary_chunk\b"?', TABLE, sql)


def _undone(sql: str, now: str, then: str) -> str:
    if sql.count(now) != 1:
        raise SystemExit(f"the product's statement no longer has {now!r}: rewrite bench/search/search_speed_buckets.py")
    return sql.replace(now, then)

"""How each side of a search reads a folder, decided from statistics that are cheap to read.

The chunk table is hash-partitioned by folder (apps/library/chunk_partitions.py): a search names
its folder, so it reads one partition, whose HNSW graph and GIN posting lists hold only the
folders sharing it (about 1/16 of the table).

Vector: pgvector 0.6 filters HNSW results after the scan, so a folder holding 1% of the rows in
its graph receives about 1% of the ``ef_search`` candidates and a plain filtered query returns too
few rows (DESIGN §6); in its partition's graph a folder's share is about ``PARTITIONS`` times its
share of the table. Small folders use an exact scan through the partition's folder btree; larger
ones use HNSW with ``ef_search`` raised until the folder's expected share of the candidates covers
k, and fall back to the exact scan in the same statement when HNSW still finds fewer than k rows.
pgvector >= 0.8 has iterative index scans, which solve the problem inside the index.

Keyword: the partition's GIN posting lists hold every row of the partition, so their cost follows
the partition's size. Small folders are matched row by row instead; larger ones use GIN,
intersected with the folder btree unless the folder fills so much of its partition that checking
each match is cheaper.

Folder and partition row counts, and the pgvector version, are cached for a few minutes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from django.core.cache import cache
from django.db import connection

from apps.library.chunk_partitions import chunk_layout_version
from apps.search.statements import KeywordMethod, VectorMethod

# Up to this many rows the vector side reads the whole folder (exact, always complete), as the
# keyword side does up to KEYWORD_SCAN_MAX_ROWS. At 10k rows the exact scan took 8.5 ms of a 19-22 ms
# search, and 8 clients' p95 reached 202 ms at 1M chunks; HNSW (iterative, EF_SEARCH_MIN) answered a
# folder of 10k at 2M in 9.8 ms p50, recall@10 0.982 (bench/search/search_speed.py).
EXACT_MAX_ROWS = 5_000
# HNSW's own recall@10 (m 16, ef_construction 64) falls as its graph grows: at 300 it was 0.958-1.0
# at 1M chunks, but 0.930-0.932 (vector and halfvec graphs) for the largest folder at 2M, 200k rows
# in a partition of 460k; 500 gave 0.964 there for 1 ms more (bench/search/search_speed.py).
EF_SEARCH_MIN = 500
EF_SEARCH_MAX = 1000  # pgvector's ceiling
# Candidates the folder should receive per wanted row: the folder's top k sit around rank
# k / share of the graph, and HNSW misses some of those it should return.
OVERFETCH = 2.5
# Up to this many rows the keyword side reads the whole folder rather than the GIN index, whose
# posting lists hold every row of the partition: about 1.4 µs a row against 0.25 µs a posting.
KEYWORD_SCAN_MAX_ROWS = 5_000
# GIN postings a keyword search may read; lexemes beyond it (the commonest) only score.
# A scanned folder has no budget: reading it costs the same whichever lexemes select.
KEYWORD_POSTING_BUDGET = 20_000
# From this share of its partition up, a bitmap of the folder's rows (about 0.1 µs a row) costs more
# than checking the folder on each row the GIN index matches (those grow as 1 / share).
KEYWORD_FILTER_MIN_SHARE = 0.1
STATS_TTL_SECONDS = 300

T = TypeVar("T")


@dataclass(frozen=True)
class VectorPlan:
    method: VectorMethod
    ef_search: int = EF_SEARCH_MIN


def vector_plan(*, folder_rows: int, graph_rows: int, k: int, depth: int, iterative_scans: bool) -> VectorPlan:
    """``k`` rows the folder must get (else the exact fallback runs); up to ``depth`` are welcome.

    ``graph_rows``: rows in the HNSW index the folder's search reads (its partition's).
    """
    if folder_rows <= EXACT_MAX_ROWS:
        return VectorPlan(VectorMethod.EXACT)
    if iterative_scans:
        return VectorPlan(VectorMethod.ITERATIVE, ef_search=max(EF_SEARCH_MIN, depth))
    share = folder_rows / max(graph_rows, folder_rows)
    ef_search = max(EF_SEARCH_MIN, depth, math.ceil(OVERFETCH * k / share))
    if ef_search > EF_SEARCH_MAX:
        return VectorPlan(VectorMethod.EXACT)
    return VectorPlan(VectorMethod.HNSW, ef_search=ef_search)


@dataclass(frozen=True)
class KeywordPlan:
    method: KeywordMethod
    # Table-wide postings per matching row of the folder (0: the budget does not apply).
    posting_scale: float = 0.0

    @property
    def row_budget(self) -> bool:
        """Whether the rarest lexemes' document frequencies must stay within a budget of rows: a
        scan reads the whole (small) folder anyway, so every lexeme of the question selects candidates."""
        return self.method is not KeywordMethod.SCAN


def keyword_plan(*, folder_rows: int, partition_rows: int) -> KeywordPlan:
    """``partition_rows``: rows in the GIN index the folder's search reads (its partition's)."""
    if folder_rows <= KEYWORD_SCAN_MAX_ROWS:
        return KeywordPlan(KeywordMethod.SCAN)
    scale = max(partition_rows, folder_rows) / folder_rows
    method = KeywordMethod.INDEX_FILTER if 1 / scale >= KEYWORD_FILTER_MIN_SHARE else KeywordMethod.INDEX
    return KeywordPlan(method, posting_scale=scale)


@dataclass(frozen=True)
class FolderPartition:
    """The partition holding a folder's chunks, and the planner's estimate of its rows (kept by
    autovacuum, free to read; -1 before the first ANALYZE)."""

    name: str | None  # None when the table is not partitioned (rows are then the table's)
    rows: int


@dataclass(frozen=True)
class SearchPlan:
    vector: VectorPlan
    keyword: KeywordPlan
    # INDEX_FILTER reads the folder's partition by name (statements.StatementShape.keyword_partition).
    keyword_partition: str | None


def search_plan(*, folder_id: int, folder_rows: int, k: int, depth: int) -> SearchPlan:
    """Both sides' plans for a folder of ``folder_rows`` chunks. Its partition is read once, and
    only when a side's choice depends on it: never for a folder small enough to be read whole."""
    partition = functools.cache(lambda: folder_partition(folder_id=folder_id))
    iterative = pgvector_has_iterative_scans()
    graph_rows = partition().rows if folder_rows > EXACT_MAX_ROWS and not iterative else folder_rows
    vector = vector_plan(folder_rows=folder_rows, graph_rows=graph_rows, k=k, depth=depth, iterative_scans=iterative)
    partition_rows = partition().rows if folder_rows > KEYWORD_SCAN_MAX_ROWS else folder_rows
    keyword = keyword_plan(folder_rows=folder_rows, partition_rows=partition_rows)
    name = partition().name if keyword.method is KeywordMethod.INDEX_FILTER else None
    return SearchPlan(vector, keyword, name)


def _cached(key: str, compute: Callable[[], T]) -> T:
    value: T | None = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, STATS_TTL_SECONDS)
    return value


def _cache_key(*parts: object) -> str:
    return ":".join(["search", str(connection.settings_dict["NAME"]), *map(str, parts)])


def folder_chunk_count(*, folder_id: int) -> int:
    def count() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM library_chunk WHERE folder_id = %s", [folder_id])
            (rows,) = cursor.fetchone() or (0,)
            return int(rows)

    return _cached(_cache_key("folder-chunks", folder_id), count)


def folder_chunk_count_forget(*, folder_id: int) -> None:
    cache.delete(_cache_key("folder-chunks", folder_id))


# The partition holding the folder and its row estimate. No row when the table is not partitioned.
_FOLDER_PARTITION = r"""
SELECT c.relname::text, c.reltuples::bigint
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
CROSS JOIN LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid), 'modulus (\d+), remainder (\d+)') AS b
WHERE i.inhparent = 'library_chunk'::regclass
  AND satisfies_hash_partition('library_chunk'::regclass, b[1]::int, b[2]::int, %s::bigint)
"""


def folder_partition(*, folder_id: int) -> FolderPartition:
    """The partition a folder's search reads (the size of its HNSW graph and GIN index)."""

    def fetch() -> tuple[str, int]:
        with connection.cursor() as cursor:
            cursor.execute(_FOLDER_PARTITION, [folder_id])
            row = cursor.fetchone()
            if row is None:
                cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = 'library_chunk'::regclass")
                (rows,) = cursor.fetchone() or (-1,)
                return "", int(rows)
            return str(row[0]), int(row[1])

    # Keyed by the layout's version: a move to another partition count renames the partitions.
    name, rows = _cached(_cache_key("partition", chunk_layout_version(), folder_id), fetch)
    return FolderPartition(name or None, rows)


def pgvector_has_iterative_scans() -> bool:
    def check() -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
        return row is not None and _version(row[0]) >= (0, 8)

    return _cached(_cache_key("pgvector-iterative"), check)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2] if part.isdigit())

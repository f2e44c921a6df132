"""A folder's search reads its own partition (apps/library/chunk_partitions.py), and its HNSW leg
that partition's graph (apps/library/vector_index.py, over halfvec), never another's."""

import re

import pytest
from django.core.cache import cache
from django.db import connection, transaction

from apps.library import vector_index
from apps.library.chunk_partitions import PARTITIONS, partition_name
from apps.search import planning
from apps.search.selectors import chunk_search
from apps.search.types import SearchMode
from tests.support.search_corpus import QUESTION

pytestmark = pytest.mark.django_db


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def __call__(self, execute, sql, params, many, context):
        self.calls.append((sql, params))
        return execute(sql, params, many, context)


def _partition_of(folder_id: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT tableoid::regclass::text FROM library_chunk WHERE folder_id = %s", [folder_id])
        (name,) = cursor.fetchall()
    return name[0]


def test_every_partition_has_its_hnsw_index():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, x.indexrelid::regclass::text, pg_get_indexdef(x.indexrelid) FROM pg_inherits i"
            " JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_index x ON x.indrelid = c.oid"
            " WHERE i.inhparent = 'library_chunk'::regclass AND pg_get_indexdef(x.indexrelid) LIKE %s",
            ["%USING hnsw%"],
        )
        rows = cursor.fetchall()
    # One HNSW index a partition, over the embedding as halfvec: the vector one is gone (library/0017).
    assert sorted(row[0] for row in rows) == [partition_name(r) for r in range(PARTITIONS)]
    for partition, index, definition in rows:
        assert index == f"{partition}_embedding_halfvec_hnsw"
        assert "USING hnsw (((embedding)::halfvec(384)) halfvec_cosine_ops)" in definition, definition
        assert "WHERE" not in definition
    assert vector_index.INDEX == "library_chunk_embedding_halfvec_hnsw"


def _plan_of_search(folder_id: int, mode: SearchMode, *, hnsw_only: bool = False) -> str:
    recorder = Recorder()
    with connection.execute_wrapper(recorder):
        chunk_search(folder_id=folder_id, query=QUESTION, k=10, mode=mode)
    settings = [call for call in recorder.calls if "set_config" in call[0]]  # ef_search, iterative scans
    search_sql, search_params = next(call for call in recorder.calls if "fused AS" in call[0])
    with transaction.atomic(), connection.cursor() as cursor:
        for settings_sql, settings_params in settings:
            cursor.execute(settings_sql, settings_params)
        if hnsw_only:
            # A test table is tiny: the planner rightly prefers reading it whole or through a folder
            # btree. Without those paths (undone with the test's transaction) an ordered index scan
            # can only be the partition's HNSW.
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_bitmapscan = off")
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the fixtures' deferred foreign key checks
            cursor.execute("ALTER TABLE library_chunk DROP CONSTRAINT library_chunk_pkey")
            cursor.execute("ALTER TABLE library_chunk DROP CONSTRAINT chunk_unique_index")
        cursor.execute("EXPLAIN (COSTS OFF) " + search_sql, search_params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        transaction.set_rollback(True)
    return plan


def test_a_folders_search_reads_only_its_partition(corpus, other_corpus):
    for folder in (corpus.folder, other_corpus.folder):
        for mode in (SearchMode.HYBRID, SearchMode.KEYWORD, SearchMode.VECTOR):
            plan = _plan_of_search(folder.pk, mode)
            assert set(re.findall(r"library_chunk_p\d\d", plan)) == {_partition_of(folder.pk)}, plan


def test_the_hnsw_leg_reads_the_halfvec_index_of_its_folders_partition(corpus, other_corpus, monkeypatch):
    monkeypatch.setattr(planning, "EXACT_MAX_ROWS", 0)
    assert planning.pgvector_has_iterative_scans()  # the plan below is the iterative one's
    for folder in (corpus.folder, other_corpus.folder):
        plan = _plan_of_search(folder.pk, SearchMode.VECTOR, hnsw_only=True)
        own = _partition_of(folder.pk)
        assert f"Index Scan using {own}_embedding_halfvec_hnsw on {own} " in plan, plan
        assert "Order By: ((embedding)::halfvec(384) <=> " in plan, plan
        assert set(re.findall(r"library_chunk_p\d\d", plan)) == {own}


def test_the_iterative_plan_sets_iterative_scans(corpus, monkeypatch):
    monkeypatch.setattr(planning, "EXACT_MAX_ROWS", 0)
    recorder = Recorder()
    with connection.execute_wrapper(recorder):
        chunk_search(folder_id=corpus.folder.pk, query=QUESTION, k=10, mode=SearchMode.VECTOR)
    assert any("'hnsw.iterative_scan', 'relaxed_order'" in sql for sql, _ in recorder.calls)


def test_partition_count_is_the_rows_of_the_folders_sharing_the_partition(corpus, other_corpus):
    cache.clear()  # counts are cached per folder
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE library_chunk")
        cursor.execute(f"SELECT count(*) FROM {_partition_of(corpus.folder.pk)}")  # noqa: S608 - a catalog name
        (expected,) = cursor.fetchone()
    partition = planning.folder_partition(folder_id=corpus.folder.pk)
    assert partition.rows == expected > 0
    assert partition.name == _partition_of(corpus.folder.pk)

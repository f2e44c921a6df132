"""The HNSW leg reads its folder's bucket index (apps/library/vector_index.py), never another's."""

import pytest
from django.core.cache import cache
from django.db import connection, transaction

from apps.library import vector_index
from apps.library.models import Chunk
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


def test_every_bucket_has_its_partial_index():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'library_chunk' AND indexdef LIKE %s",
            ["%USING hnsw%"],
        )
        definitions = dict(cursor.fetchall())
    assert sorted(definitions) == [vector_index.index_name(bucket) for bucket in range(vector_index.BUCKETS)]
    for bucket in range(vector_index.BUCKETS):
        predicate = f"WHERE ((folder_id % ({vector_index.BUCKETS})::bigint) = {bucket})"
        assert predicate in definitions[vector_index.index_name(bucket)]


def _plan_of_vector_search(folder_id: int) -> str:
    recorder = Recorder()
    with connection.execute_wrapper(recorder):
        chunk_search(folder_id=folder_id, query=QUESTION, k=10, mode=SearchMode.VECTOR)
    settings_sql, settings_params = next(call for call in recorder.calls if "set_config" in call[0])
    search_sql, search_params = next(call for call in recorder.calls if "vector_indexed" in call[0])
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(settings_sql, settings_params)
        # A test table is tiny: the planner rightly prefers reading it whole or through the folder
        # btree. Without those paths (the DROP is undone with the test's transaction) an index
        # scan can only use an HNSW index whose predicate the statement implies.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("DROP INDEX IF EXISTS library_chunk_folder_idx")
        cursor.execute("EXPLAIN (COSTS OFF) " + search_sql, search_params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_the_hnsw_leg_reads_the_index_of_its_folders_bucket(corpus, other_corpus, monkeypatch):
    monkeypatch.setattr(planning, "EXACT_MAX_ROWS", 0)
    for folder in (corpus.folder, other_corpus.folder):
        plan = _plan_of_vector_search(folder.pk)
        own = vector_index.index_name(vector_index.bucket_of(folder.pk))
        assert f"Index Scan using {own} " in plan
        others = {vector_index.index_name(b) for b in range(vector_index.BUCKETS)} - {own}
        assert not any(name in plan for name in others)


def test_bucket_count_is_the_rows_of_the_folders_sharing_the_bucket(corpus, other_corpus):
    cache.clear()  # counts are cached per bucket, and earlier tests' folders shared buckets
    bucket = vector_index.bucket_of(corpus.folder.pk)
    expected = sum(
        Chunk.objects.filter(folder=folder, embedding__isnull=False).count()
        for folder in (corpus.folder, other_corpus.folder)
        if vector_index.bucket_of(folder.pk) == bucket
    )
    assert planning.bucket_chunk_count(folder_id=corpus.folder.pk) == expected > 0

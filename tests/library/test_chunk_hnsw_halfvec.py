"""The chunk table's HNSW index moves to halfvec (library/0017) and back to vector, on the
partitioned table while searches run and on a plain one; a replacement stopped half way runs again."""

from __future__ import annotations

import importlib
import threading
import time

import pytest
from django.core.management import call_command
from django.db import connection

from apps.library.chunk_partitions import PARTITIONS
from apps.library.models import File, Folder
from tests.support.chunk_tables import (
    Searcher,
    chunk_table_partitions,
    file_chunks_write,
    folder_top_chunks,
    folders_load,
    migration_before,
    migration_named,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_the_hnsw_index_goes_back_to_vector_and_to_halfvec_again_under_searches(user):
    """library/0017 backward and forward on a table with rows in four folders, searches running."""
    halfvec = migration_named("library", "_chunk_hnsw_halfvec")
    folders, _chunks = folders_load(user)
    before = {folder.pk: folder_top_chunks(folder) for folder in folders}
    assert _hnsw_indexes() == _expected_hnsw("embedding_halfvec_hnsw", "halfvec_cosine_ops")
    try:
        for target, name, opclass in (
            (migration_before(halfvec), "embedding_hnsw", "vector_cosine_ops"),
            (halfvec[1], "embedding_halfvec_hnsw", "halfvec_cosine_ops"),
        ):
            stop = threading.Event()
            searchers = [Searcher(folders, stop) for _ in range(2)]
            for searcher in searchers:
                searcher.start()
            try:
                time.sleep(0.3)  # searches under way before the migration starts
                call_command("migrate", "library", target, verbosity=0)
                time.sleep(0.3)
            finally:
                stop.set()
                for searcher in searchers:
                    searcher.join(timeout=60)
            assert [error for searcher in searchers for error in searcher.errors] == []
            assert all(searcher.searches > 3 for searcher in searchers)
            # The other index is gone, this one is valid on every partition and attached to the parent's.
            assert _hnsw_indexes() == _expected_hnsw(name, opclass)
            assert {folder.pk: folder_top_chunks(folder) for folder in folders} == before
    finally:
        call_command("migrate", "library", verbosity=0)


def test_the_hnsw_index_moves_to_halfvec_on_a_plain_table_too(user):
    """library/0017's steps on one plain table (library/0015's reverse), and again once done."""
    halfvec = migration_named("library", "_chunk_hnsw_halfvec")
    steps = importlib.import_module(f"apps.library.migrations.{halfvec[1]}")
    folder = Folder.objects.create(owner=user, source="local", external_id="/plain", name="plain", status="ready")
    file = File.objects.create(folder=folder, external_id="p", path="p.md", name="p.md")
    file_chunks_write(file, 20)
    call_command("migrate", "library", migration_before(migration_named("library", "_chunk_partitions")), verbosity=0)
    try:
        assert not chunk_table_partitions()
        steps.to_halfvec(None, None)
        steps.to_halfvec(None, None)  # run again: kept as it is
        assert _hnsw_indexes("WHERE x.indpred IS NULL") == {
            ("library_chunk", "library_chunk_embedding_halfvec_hnsw", "halfvec_cosine_ops", True)
        }
        steps.to_vector(None, None)
        assert _hnsw_indexes("WHERE x.indpred IS NULL") == {
            ("library_chunk", "library_chunk_embedding_hnsw", "vector_cosine_ops", True)
        }
    finally:
        call_command("migrate", "library", verbosity=0)
    assert _hnsw_indexes() == _expected_hnsw("embedding_halfvec_hnsw", "halfvec_cosine_ops")


def test_a_replacement_that_stopped_half_way_runs_again(user):
    """What an interrupted library/0017 leaves (a parent index not valid yet, a partition's index
    not attached) is dropped and built again."""
    steps = importlib.import_module(f"apps.library.migrations.{migration_named('library', '_chunk_hnsw_halfvec')[1]}")
    folder = Folder.objects.create(owner=user, source="local", external_id="/again", name="again", status="ready")
    file_chunks_write(File.objects.create(folder=folder, external_id="a", path="a.md", name="a.md"), 20)
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE INDEX {steps.VECTOR.name} ON ONLY library_chunk {steps.VECTOR.definition}")
        cursor.execute(f"CREATE INDEX library_chunk_p00_embedding_hnsw ON library_chunk_p00 {steps.VECTOR.definition}")
    try:
        assert ("library_chunk", steps.VECTOR.name, "vector_cosine_ops", False) in _hnsw_indexes()
        steps.to_vector(None, None)
        assert _hnsw_indexes() == _expected_hnsw("embedding_hnsw", "vector_cosine_ops")
    finally:
        steps.to_halfvec(None, None)
    assert _hnsw_indexes() == _expected_hnsw("embedding_halfvec_hnsw", "halfvec_cosine_ops")


_HNSW_INDEXES = """
SELECT * FROM (
    SELECT x.indrelid::regclass::text AS tab, x.indexrelid::regclass::text, o.opcname::text, x.indisvalid, x.indpred
    FROM pg_index x
    JOIN pg_class c ON c.oid = x.indexrelid
    JOIN pg_am a ON a.oid = c.relam
    JOIN pg_opclass o ON o.oid = x.indclass[0]
    WHERE a.amname = 'hnsw'
      AND (x.indrelid = 'library_chunk'::regclass
           OR x.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'library_chunk'::regclass))
) x """


def _hnsw_indexes(where: str = "") -> set[tuple[str, str, str, bool]]:
    """The chunk table's HNSW indexes: (table or partition, index, operator class, valid)."""
    with connection.cursor() as cursor:
        cursor.execute(_HNSW_INDEXES + where)  # the tests' own conditions
        return {row[:4] for row in cursor.fetchall()}


def _expected_hnsw(name: str, opclass: str) -> set[tuple[str, str, str, bool]]:
    partitions = [f"library_chunk_p{r:02d}" for r in range(PARTITIONS)]
    return {("library_chunk", f"library_chunk_{name}", opclass, True)} | {
        (partition, f"{partition}_{name}", opclass, True) for partition in partitions
    }

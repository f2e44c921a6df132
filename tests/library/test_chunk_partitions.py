"""The chunk table moves to hash partitions (library/0015), and its HNSW index to halfvec (library/0017),
while searches and indexing run."""

from __future__ import annotations

import importlib
import logging
import threading
import time

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.db.migrations.loader import MigrationLoader

from apps.library.chunk_partitions import PARTITIONS, partitioned_layout
from apps.library.chunk_store import chunks_replace
from apps.library.chunking import ChunkPiece
from apps.library.models import File, Folder
from apps.search import planning
from apps.search.selectors import chunk_search
from apps.search.services import folder_lexeme_stats_refresh

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORDS = "revenue budget audit invoice ledger forecast payroll treasury contract renewal pension quarterly".split()  # noqa: SIM905
FOLDERS = 4
FILES_PER_FOLDER = 10
CHUNKS_PER_FILE = 75  # 3,000 chunks
RNG = np.random.default_rng(40)
PAUSE_SECONDS = 0.05


def _migration(app_label: str, suffix: str) -> tuple[str, str]:
    """The partition migration, found by name: its number may change."""
    loader = MigrationLoader(connection)
    names = [name for app, name in loader.disk_migrations if app == app_label and name.endswith(suffix)]
    assert len(names) == 1, names
    return app_label, names[0]


def _before(migration: tuple[str, str]) -> str:
    loader = MigrationLoader(connection)
    parents = [parent for parent in loader.graph.node_map[migration].parents if parent.key[0] == migration[0]]
    assert len(parents) == 1
    return parents[0].key[1]


def _pieces(count: int) -> list[ChunkPiece]:
    texts = [" ".join(RNG.choice(WORDS, size=12)) for _ in range(count)]
    return [ChunkPiece(index=i, text=text, token_count=12, location={"chunk": i}) for i, text in enumerate(texts)]


def _vectors(count: int) -> np.ndarray:
    vectors = RNG.standard_normal((count, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _write_file(file: File, count: int, *, defer: bool = False) -> set[int]:
    """The product's chunk writer; returns the file's chunk ids after it."""
    with transaction.atomic():
        if defer:  # as a bulk indexing run leaves them: the backfill UPDATEs them
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL folderchat.defer_search_vector = 'on'")
        chunks_replace(file_id=file.pk, folder_id=file.folder_id, pieces=_pieces(count), vectors=_vectors(count))
        return _ids("WHERE file_id = %s", [file.pk])


def _ids(where: str = "", params: list | None = None) -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM library_chunk {where}", params)  # noqa: S608 - the tests' own conditions
        return {row[0] for row in cursor.fetchall()}


def _content(file_ids: list[int]) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT md5(string_agg(concat_ws('|', id, file_id, folder_id, chunk_index, text, embedding::text,"
            " search_vector::text, location::text, token_count), ',' ORDER BY id))"
            " FROM library_chunk WHERE file_id = ANY(%s)",
            [file_ids],
        )
        return cursor.fetchone()[0]


def _load(user) -> tuple[list[Folder], dict[int, set[int]]]:
    folders, chunks = [], {}
    for f in range(FOLDERS):
        folder = Folder.objects.create(owner=user, source="local", external_id=f"/p{f}", name=f"p{f}", status="ready")
        folders.append(folder)
        for n in range(FILES_PER_FOLDER):
            file = File.objects.create(
                folder=folder, external_id=f"{f}-{n}", path=f"f{n}.md", name=f"f{n}.md", status="indexed"
            )
            chunks[file.pk] = _write_file(file, CHUNKS_PER_FILE)
        folder_lexeme_stats_refresh(folder_id=folder.pk)
    return folders, chunks


QUESTIONS = [("revenue audit", _vectors(1)[0]), ("pension contract renewal", _vectors(1)[0])]


def _top(folder: Folder) -> list[list[int]]:
    return [
        [hit.chunk_id for hit in chunk_search(folder_id=folder.pk, query=text, k=10, query_vector=vector)]
        for text, vector in QUESTIONS
    ]


class Searcher(threading.Thread):
    def __init__(self, folders: list[Folder], stop: threading.Event) -> None:
        super().__init__()
        self.folders, self.stop, self.errors, self.searches = folders, stop, [], 0

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                for folder in self.folders:
                    try:
                        _top(folder)
                        self.searches += 1
                    except Exception as error:  # noqa: BLE001 - every error is a failure to report
                        self.errors.append(repr(error))
                    # Each index built CONCURRENTLY waits for the searches in flight: a pause between
                    # them keeps the move within seconds (16 partitions x 5 indexes).
                    time.sleep(PAUSE_SECONDS)
        finally:
            connection.close()


class Writer(threading.Thread):
    """Replaces, deletes and adds files in the folders it is given, keeping the chunk ids each
    file should have; some writes leave the tsvector to the backfill, whose UPDATE must be mirrored."""

    def __init__(self, folders: list[Folder], chunks: dict[int, set[int]], stop: threading.Event) -> None:
        super().__init__()
        self.folders, self.stop, self.errors, self.writes = folders, stop, [], 0
        self.chunks = {
            file_id: ids
            for file_id, ids in chunks.items()
            if File.objects.filter(pk=file_id, folder__in=folders).exists()
        }

    def run(self) -> None:
        from apps.library.backfill import search_vectors_backfill_batch

        step = 0
        try:
            while not self.stop.is_set():
                try:
                    folder = self.folders[step % len(self.folders)]
                    existing = sorted(self.chunks)
                    if step % 3 == 0:
                        file = File.objects.get(pk=existing[step % len(existing)])
                        self.chunks[file.pk] = _write_file(file, CHUNKS_PER_FILE - 5, defer=True)
                        search_vectors_backfill_batch(batch_size=200)
                    elif step % 3 == 1:
                        file_id = existing[(step * 7) % len(existing)]
                        File.objects.filter(pk=file_id).delete()  # cascades to its chunks
                        del self.chunks[file_id]
                    else:
                        file = File.objects.create(
                            folder=folder, external_id=f"w{step}", path=f"w{step}.md", name=f"w{step}.md"
                        )
                        self.chunks[file.pk] = _write_file(file, 30)
                    self.writes += 1
                except Exception as error:  # noqa: BLE001
                    self.errors.append(repr(error))
                step += 1
                time.sleep(PAUSE_SECONDS)
        finally:
            connection.close()


def test_the_move_to_partitions_loses_no_chunk_under_searches_and_writes(user, caplog):
    caplog.set_level(logging.INFO, logger="apps.library.chunk_partitions")
    partitions = _migration("library", "_chunk_partitions")
    call_command("migrate", "library", _before(partitions), verbosity=0)
    try:
        assert not _partitioned()
        folders, chunks = _load(user)
        quiet, busy = folders[:2], folders[2:]
        before = {folder.pk: _top(folder) for folder in quiet}
        quiet_files = [file_id for file_id in chunks if File.objects.get(pk=file_id).folder_id in {f.pk for f in quiet}]
        quiet_content = _content(quiet_files)

        stop = threading.Event()
        searchers = [Searcher(folders, stop) for _ in range(2)]
        writer = Writer(busy, chunks, stop)
        for thread in [*searchers, writer]:
            thread.start()
        try:
            time.sleep(0.5)  # writes and searches under way before the move starts
            started = time.monotonic()
            call_command("migrate", "library", partitions[1], verbosity=0)
            moved_in = time.monotonic() - started
            time.sleep(0.5)  # and on the new table after it
        finally:
            stop.set()
            for thread in [*searchers, writer]:
                thread.join(timeout=60)

        assert [error for thread in [*searchers, writer] for error in thread.errors] == []
        assert writer.writes > 3 and all(searcher.searches > 3 for searcher in searchers)
        assert _partitioned() == PARTITIONS
        # Every chunk is where it should be, once: the quiet folders' rows unchanged, the busy
        # folders' rows exactly those the writer's last write of each file left.
        expected = {chunk_id for file_id, ids in chunks.items() if file_id in quiet_files for chunk_id in ids}
        expected |= {chunk_id for ids in writer.chunks.values() for chunk_id in ids}
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*), count(DISTINCT id) FROM library_chunk")
            total, distinct = cursor.fetchone()
        assert total == distinct == len(expected)
        assert _ids() == expected
        assert _content(quiet_files) == quiet_content
        assert _ids("WHERE search_vector IS NULL") == set()  # backfilled rows kept their vectors
        for folder in quiet:
            planning.folder_chunk_count_forget(folder_id=folder.pk)
            assert _top(folder) == before[folder.pk]
        assert moved_in < 60, caplog.messages
    finally:
        call_command("migrate", "library", verbosity=0)
    assert _partitioned() == PARTITIONS


def test_a_move_back_to_one_table_and_forward_again_keeps_the_rows(user):
    partitions = _migration("library", "_chunk_partitions")
    folder = Folder.objects.create(owner=user, source="local", external_id="/small", name="small", status="ready")
    files = [
        File.objects.create(folder=folder, external_id=f"s{n}", path=f"s{n}.md", name=f"s{n}.md") for n in range(3)
    ]
    chunks = set().union(*(_write_file(file, 10) for file in files))
    partition = planning.folder_partition(folder_id=folder.pk).name  # cached from here on
    assert partition is not None and partition.startswith("library_chunk_p")
    call_command("migrate", "library", _before(partitions), verbosity=0)
    try:
        assert not _partitioned()
        # A search must not read a partition that the move dropped.
        assert planning.folder_partition(folder_id=folder.pk).name is None
        assert _ids() == chunks
        # New chunks continue the identity sequence moved with the table, both ways.
        replaced = _ids("WHERE file_id = %s", [files[0].pk])
        added = _write_file(files[0], 3)
        assert min(added) > max(chunks)
    finally:
        call_command("migrate", "library", verbosity=0)
    assert _partitioned() == PARTITIONS
    assert planning.folder_partition(folder_id=folder.pk).name == partition
    assert _ids() == (chunks - replaced) | added
    more = _write_file(files[1], 2)
    assert min(more) > max(added)


def test_the_partitioned_layout_has_its_indexes_on_every_partition():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " JOIN pg_index x ON x.indrelid = c.oid WHERE i.inhparent = 'library_chunk'::regclass GROUP BY c.relname"
        )
        per_partition = dict(cursor.fetchall())
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = 'library_chunk'::regclass AND contype IN ('p', 'u')"
        )
        keys = dict(cursor.fetchall())
    # The primary key, the unique key and the layout's indexes, on each partition.
    assert per_partition == {
        f"library_chunk_p{r:02d}": len(partitioned_layout().indexes) + 2 for r in range(PARTITIONS)
    }
    assert keys == {
        "library_chunk_pkey": "PRIMARY KEY (folder_id, id)",
        "chunk_unique_index": "UNIQUE (folder_id, file_id, chunk_index)",
    }


def test_the_hnsw_index_goes_back_to_vector_and_to_halfvec_again_under_searches(user):
    """library/0017 backward and forward on a table with rows in four folders, searches running."""
    halfvec = _migration("library", "_chunk_hnsw_halfvec")
    folders, _chunks = _load(user)
    before = {folder.pk: _top(folder) for folder in folders}
    assert _hnsw_indexes() == _expected_hnsw("embedding_halfvec_hnsw", "halfvec_cosine_ops")
    try:
        for target, name, opclass in (
            (_before(halfvec), "embedding_hnsw", "vector_cosine_ops"),
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
            assert {folder.pk: _top(folder) for folder in folders} == before
    finally:
        call_command("migrate", "library", verbosity=0)


def test_the_hnsw_index_moves_to_halfvec_on_a_plain_table_too(user):
    """library/0017's steps on one plain table (library/0015's reverse), and again once done."""
    halfvec = _migration("library", "_chunk_hnsw_halfvec")
    steps = importlib.import_module(f"apps.library.migrations.{halfvec[1]}")
    folder = Folder.objects.create(owner=user, source="local", external_id="/plain", name="plain", status="ready")
    file = File.objects.create(folder=folder, external_id="p", path="p.md", name="p.md")
    _write_file(file, 20)
    call_command("migrate", "library", _before(_migration("library", "_chunk_partitions")), verbosity=0)
    try:
        assert not _partitioned()
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
    steps = importlib.import_module(f"apps.library.migrations.{_migration('library', '_chunk_hnsw_halfvec')[1]}")
    folder = Folder.objects.create(owner=user, source="local", external_id="/again", name="again", status="ready")
    _write_file(File.objects.create(folder=folder, external_id="a", path="a.md", name="a.md"), 20)
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


def _partitioned() -> int | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_partitioned_table WHERE partrelid = 'library_chunk'::regclass")
        if cursor.fetchone() is None:
            return None
        cursor.execute("SELECT count(*) FROM pg_inherits WHERE inhparent = 'library_chunk'::regclass")
        return cursor.fetchone()[0]

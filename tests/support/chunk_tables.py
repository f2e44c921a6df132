"""What the chunk table migrations' tests share (library/0015's move to partitions, library/0017's
HNSW index on halfvec): migrations found by name, folders of files written with the product's chunk
writer, their top search hits, and threads that search and write while a migration runs."""

from __future__ import annotations

import threading
import time

import numpy as np
from django.db import connection, transaction
from django.db.migrations.loader import MigrationLoader

from apps.library.chunk_store import chunks_replace
from apps.library.chunking import ChunkPiece
from apps.library.models import File, Folder
from apps.search.selectors import chunk_search
from apps.search.services import folder_lexeme_stats_refresh

WORDS = "revenue budget audit invoice ledger forecast payroll treasury contract renewal pension quarterly".split()  # noqa: SIM905
FOLDERS = 4
FILES_PER_FOLDER = 10
CHUNKS_PER_FILE = 75  # 3,000 chunks
RNG = np.random.default_rng(40)
PAUSE_SECONDS = 0.05


def migration_named(app_label: str, suffix: str) -> tuple[str, str]:
    """The app's migration whose name ends with ``suffix``, found by name: its number may change."""
    loader = MigrationLoader(connection)
    names = [name for app, name in loader.disk_migrations if app == app_label and name.endswith(suffix)]
    assert len(names) == 1, names
    return app_label, names[0]


def migration_before(migration: tuple[str, str]) -> str:
    loader = MigrationLoader(connection)
    parents = [parent for parent in loader.graph.node_map[migration].parents if parent.key[0] == migration[0]]
    assert len(parents) == 1
    return parents[0].key[1]


def chunk_pieces(count: int) -> list[ChunkPiece]:
    texts = [" ".join(RNG.choice(WORDS, size=12)) for _ in range(count)]
    return [ChunkPiece(index=i, text=text, token_count=12, location={"chunk": i}) for i, text in enumerate(texts)]


def unit_vectors(count: int) -> np.ndarray:
    vectors = RNG.standard_normal((count, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def file_chunks_write(file: File, count: int, *, defer: bool = False) -> set[int]:
    """The product's chunk writer; returns the file's chunk ids after it."""
    with transaction.atomic():
        if defer:  # as a bulk indexing run leaves them: the backfill UPDATEs them
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL folderchat.defer_search_vector = 'on'")
        chunks_replace(
            file_id=file.pk, folder_id=file.folder_id, pieces=chunk_pieces(count), vectors=unit_vectors(count)
        )
        return chunk_ids("WHERE file_id = %s", [file.pk])


def chunk_ids(where: str = "", params: list | None = None) -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM library_chunk {where}", params)  # noqa: S608 - the tests' own conditions
        return {row[0] for row in cursor.fetchall()}


def chunks_digest(file_ids: list[int]) -> str:
    """An md5 over every column of the files' chunks, to tell rows left unchanged."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT md5(string_agg(concat_ws('|', id, file_id, folder_id, chunk_index, text, embedding::text,"
            " search_vector::text, location::text, token_count), ',' ORDER BY id))"
            " FROM library_chunk WHERE file_id = ANY(%s)",
            [file_ids],
        )
        return cursor.fetchone()[0]


def folders_load(user) -> tuple[list[Folder], dict[int, set[int]]]:
    """FOLDERS folders of FILES_PER_FOLDER files of CHUNKS_PER_FILE chunks; returns the folders
    and each file's chunk ids."""
    folders, chunks = [], {}
    for f in range(FOLDERS):
        folder = Folder.objects.create(owner=user, source="local", external_id=f"/p{f}", name=f"p{f}", status="ready")
        folders.append(folder)
        for n in range(FILES_PER_FOLDER):
            file = File.objects.create(
                folder=folder, external_id=f"{f}-{n}", path=f"f{n}.md", name=f"f{n}.md", status="indexed"
            )
            chunks[file.pk] = file_chunks_write(file, CHUNKS_PER_FILE)
        folder_lexeme_stats_refresh(folder_id=folder.pk)
    return folders, chunks


QUESTIONS = [("revenue audit", unit_vectors(1)[0]), ("pension contract renewal", unit_vectors(1)[0])]


def folder_top_chunks(folder: Folder) -> list[list[int]]:
    """The folder's ten best chunk ids for each of QUESTIONS."""
    return [
        [hit.chunk_id for hit in chunk_search(folder_id=folder.pk, query=text, k=10, query_vector=vector)]
        for text, vector in QUESTIONS
    ]


def chunk_table_partitions() -> int | None:
    """How many partitions the chunk table has, None when it is a plain table."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_partitioned_table WHERE partrelid = 'library_chunk'::regclass")
        if cursor.fetchone() is None:
            return None
        cursor.execute("SELECT count(*) FROM pg_inherits WHERE inhparent = 'library_chunk'::regclass")
        return cursor.fetchone()[0]


class Searcher(threading.Thread):
    def __init__(self, folders: list[Folder], stop: threading.Event) -> None:
        super().__init__()
        self.folders, self.stop, self.errors, self.searches = folders, stop, [], 0

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                for folder in self.folders:
                    try:
                        folder_top_chunks(folder)
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
                        self.chunks[file.pk] = file_chunks_write(file, CHUNKS_PER_FILE - 5, defer=True)
                        search_vectors_backfill_batch(batch_size=200)
                    elif step % 3 == 1:
                        file_id = existing[(step * 7) % len(existing)]
                        File.objects.filter(pk=file_id).delete()  # cascades to its chunks
                        del self.chunks[file_id]
                    else:
                        file = File.objects.create(
                            folder=folder, external_id=f"w{step}", path=f"w{step}.md", name=f"w{step}.md"
                        )
                        self.chunks[file.pk] = file_chunks_write(file, 30)
                    self.writes += 1
                except Exception as error:  # noqa: BLE001
                    self.errors.append(repr(error))
                step += 1
                time.sleep(PAUSE_SECONDS)
        finally:
            connection.close()

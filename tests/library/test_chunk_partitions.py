"""The chunk table moves to hash partitions (library/0015) and back, while searches and indexing run;
a move stopped half way is dropped and runs again."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from django.core.management import call_command
from django.db import connection

from apps.library import chunk_partitions, vector_index
from apps.library.chunk_partitions import NEXT, PARTITIONS, chunk_table_move, partitioned_layout
from apps.library.models import File, Folder
from apps.search import planning
from tests.support.chunk_tables import (
    Searcher,
    Writer,
    chunk_ids,
    chunk_table_partitions,
    chunks_digest,
    file_chunks_write,
    folder_top_chunks,
    folders_load,
    migration_before,
    migration_named,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_the_move_to_partitions_loses_no_chunk_under_searches_and_writes(user, caplog):
    caplog.set_level(logging.INFO, logger="apps.library.chunk_partitions")
    partitions = migration_named("library", "_chunk_partitions")
    call_command("migrate", "library", migration_before(partitions), verbosity=0)
    try:
        assert not chunk_table_partitions()
        folders, chunks = folders_load(user)
        quiet, busy = folders[:2], folders[2:]
        before = {folder.pk: folder_top_chunks(folder) for folder in quiet}
        quiet_files = [file_id for file_id in chunks if File.objects.get(pk=file_id).folder_id in {f.pk for f in quiet}]
        quiet_content = chunks_digest(quiet_files)

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
        assert chunk_table_partitions() == PARTITIONS
        # Every chunk is where it should be, once: the quiet folders' rows unchanged, the busy
        # folders' rows exactly those the writer's last write of each file left.
        expected = {chunk_id for file_id, ids in chunks.items() if file_id in quiet_files for chunk_id in ids}
        expected |= {chunk_id for ids in writer.chunks.values() for chunk_id in ids}
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*), count(DISTINCT id) FROM library_chunk")
            total, distinct = cursor.fetchone()
        assert total == distinct == len(expected)
        assert chunk_ids() == expected
        assert chunks_digest(quiet_files) == quiet_content
        assert chunk_ids("WHERE search_vector IS NULL") == set()  # backfilled rows kept their vectors
        for folder in quiet:
            planning.folder_chunk_count_forget(folder_id=folder.pk)
            assert folder_top_chunks(folder) == before[folder.pk]
        assert moved_in < 60, caplog.messages
    finally:
        call_command("migrate", "library", verbosity=0)
    assert chunk_table_partitions() == PARTITIONS


def test_a_move_back_to_one_table_and_forward_again_keeps_the_rows(user):
    partitions = migration_named("library", "_chunk_partitions")
    folder = Folder.objects.create(owner=user, source="local", external_id="/small", name="small", status="ready")
    files = [
        File.objects.create(folder=folder, external_id=f"s{n}", path=f"s{n}.md", name=f"s{n}.md") for n in range(3)
    ]
    chunks = set().union(*(file_chunks_write(file, 10) for file in files))
    partition = planning.folder_partition(folder_id=folder.pk).name  # cached from here on
    assert partition is not None and partition.startswith("library_chunk_p")
    call_command("migrate", "library", migration_before(partitions), verbosity=0)
    try:
        assert not chunk_table_partitions()
        # A search must not read a partition that the move dropped.
        assert planning.folder_partition(folder_id=folder.pk).name is None
        assert chunk_ids() == chunks
        # New chunks continue the identity sequence moved with the table, both ways.
        replaced = chunk_ids("WHERE file_id = %s", [files[0].pk])
        added = file_chunks_write(files[0], 3)
        assert min(added) > max(chunks)
    finally:
        call_command("migrate", "library", verbosity=0)
    assert chunk_table_partitions() == PARTITIONS
    assert planning.folder_partition(folder_id=folder.pk).name == partition
    assert chunk_ids() == (chunks - replaced) | added
    more = file_chunks_write(files[1], 2)
    assert min(more) > max(added)


def test_the_partitioned_layout_has_its_indexes_on_every_partition():
    _assert_partitioned_layout()


def test_a_move_that_stopped_half_way_is_dropped_and_started_again(user, monkeypatch):
    """What a move stopped while building the new table's indexes leaves (the next table with its
    partitions, rows and first index, the mirror function and its triggers on the live table) is
    dropped when the move runs again, and the move then completes with every chunk."""
    files = []
    for f in range(2):
        folder = Folder.objects.create(owner=user, source="local", external_id=f"/h{f}", name=f"h{f}", status="ready")
        files += [
            File.objects.create(folder=folder, external_id=f"h{f}-{n}", path=f"h{n}.md", name=f"h{n}.md")
            for n in range(2)
        ]
    for file in files:
        file_chunks_write(file, 10)
    own_triggers = _triggers()
    build, built = chunk_partitions.chunk_index_build, []

    def build_one_then_stop(**kwargs) -> None:
        if built:
            raise RuntimeError("move stopped")
        build(**kwargs)
        built.append(kwargs["name"])

    try:
        with monkeypatch.context() as patch:
            patch.setattr(chunk_partitions, "chunk_index_build", build_one_then_stop)
            with pytest.raises(RuntimeError, match="move stopped"):
                chunk_table_move(layout=partitioned_layout())
        left = _relations_of(NEXT)
        assert len(_tables_of(NEXT)) == PARTITIONS + 1
        assert built == [f"{vector_index.INDEX}_next"]
        with connection.cursor() as cursor:
            cursor.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", built)
            assert cursor.fetchone() == (True,)
        assert _triggers() == own_triggers | {f"{NEXT}_mirror_{event}" for event in _MIRROR_EVENTS}
        # Writes go on meanwhile: the abandoned table's triggers still mirror them into it.
        file_chunks_write(files[0], 12)
        File.objects.filter(pk=files[1].pk).delete()
        kept = [file.pk for file in files[2:]] + [files[0].pk]
        chunks, content = chunk_ids(), chunks_digest(kept)
        assert _count(NEXT) == len(chunks)

        chunk_table_move(layout=partitioned_layout())

        assert _relations_of(NEXT) == set()
        assert _mirror_function() is None
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_class WHERE oid = ANY(%s)", [sorted(left)])
            assert cursor.fetchone()[0] == 0  # dropped, not renamed into the layout
        assert _triggers() == own_triggers
        assert _count("library_chunk") == len(chunks)
        assert chunk_ids() == chunks
        assert chunks_digest(kept) == content
        _assert_partitioned_layout()
    finally:
        with connection.cursor() as cursor:  # whatever a failure left, so the next tests can flush
            cursor.execute(f"DROP FUNCTION IF EXISTS {NEXT}_mirror() CASCADE")
            cursor.execute(f"DROP TABLE IF EXISTS {NEXT}")


_MIRROR_EVENTS = ("insert", "update", "delete", "truncate")


def _tables_of(parent: str) -> set[int]:
    """``parent`` and its partitions, by oid (empty when it does not exist)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT oid FROM pg_class WHERE oid = to_regclass(%s)"
            " UNION SELECT inhrelid FROM pg_inherits WHERE inhparent = to_regclass(%s)",
            [parent, parent],
        )
        return {row[0] for row in cursor.fetchall()}


def _relations_of(parent: str) -> set[int]:
    """``parent``, its partitions and their indexes, by oid."""
    tables = _tables_of(parent)
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexrelid FROM pg_index WHERE indrelid = ANY(%s::oid[])", [sorted(tables)])
        return tables | {row[0] for row in cursor.fetchall()}


def _triggers() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = 'library_chunk'::regclass AND NOT tgisinternal"
            " AND tgparentid = 0"
        )
        return {row[0] for row in cursor.fetchall()}


def _mirror_function() -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regprocedure(%s)::text", [f"{NEXT}_mirror()"])
        return cursor.fetchone()[0]


def _count(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 - the tests' own table names
        return cursor.fetchone()[0]


def _assert_partitioned_layout() -> None:
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

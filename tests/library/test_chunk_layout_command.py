"""``manage.py chunk_layout``: what an operator sees of the chunk table's partitions, and the move to
another partition count (16 then 32 as the table grows) with every chunk and search result kept."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from apps.library.chunk_partitions import MAX_PARTITIONS, PARTITIONS
from apps.library.management.commands import chunk_layout
from apps.library.models import File, Folder
from apps.search import planning
from apps.search.services import folder_lexeme_stats_refresh
from tests.support.chunk_tables import chunk_ids, chunk_table_partitions, chunks_digest, file_chunks_write
from tests.support.chunk_tables import folder_top_chunks as top_chunks

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _layout(*args: str) -> str:
    out = io.StringIO()
    call_command("chunk_layout", *args, stdout=out)
    return out.getvalue()


def _folders_with_chunks(user) -> tuple[list[Folder], list[int]]:
    folders, files = [], []
    for f in range(3):
        folder = Folder.objects.create(owner=user, source="local", external_id=f"/l{f}", name=f"l{f}", status="ready")
        folders.append(folder)
        for n in range(2):
            file = File.objects.create(
                folder=folder, external_id=f"l{f}-{n}", path=f"l{n}.md", name=f"l{n}.md", status="indexed"
            )
            file_chunks_write(file, 10)
            files.append(file.pk)
        folder_lexeme_stats_refresh(folder_id=folder.pk)
    return folders, files


def test_the_layout_is_shown_partition_by_partition(user):
    _folders_with_chunks(user)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE library_chunk")  # as autovacuum would: the estimates are then the counts

    shown = _layout()

    assert f"library_chunk: {PARTITIONS} hash partitions by folder, ~60 chunks" in shown
    listed = re.findall(r"^  (library_chunk_p\d+): ~(\d+) chunks", shown, flags=re.MULTILINE)
    assert [name for name, _ in listed] == [f"library_chunk_p{r:02d}" for r in range(PARTITIONS)]
    assert sum(int(rows) for _, rows in listed) == 60


def test_a_partition_past_the_recall_limit_is_pointed_out(user, monkeypatch):
    _folders_with_chunks(user)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE library_chunk")
    assert "Move to more partitions" not in _layout()
    monkeypatch.setattr(chunk_layout, "LARGEST_PARTITION_ROWS", 15)  # each folder holds 20 chunks

    shown = _layout()

    assert re.search(
        rf"library_chunk_p\d\d holds more than 15 chunks: .* chunk_layout --partitions {PARTITIONS * 2}$", shown
    )


def test_a_move_to_more_partitions_keeps_every_chunk_and_every_answer(user):
    folders, files = _folders_with_chunks(user)
    chunks, content = chunk_ids(), chunks_digest(files)
    answers = {folder.pk: top_chunks(folder) for folder in folders}
    try:
        moved = _layout("--partitions", "32", "--batch-rows", "7")

        assert "Moved 60 chunks in 9 batches" in moved
        assert "library_chunk: 32 hash partitions by folder, ~60 chunks" in moved
        assert chunk_table_partitions() == 32
        assert chunk_ids() == chunks
        assert chunks_digest(files) == content
        assert {folder.pk: top_chunks(folder) for folder in folders} == answers
        # Searches look their folder's partition up again under the new names.
        assert all(
            re.fullmatch(r"library_chunk_p\d\d", planning.folder_partition(folder_id=folder.pk).name or "")
            for folder in folders
        )
        added = file_chunks_write(File.objects.get(pk=files[0]), 3)
        assert min(added) > max(chunks)  # the id sequence moved with the table
    finally:
        call_command("chunk_layout", "--partitions", str(PARTITIONS), stdout=io.StringIO())
    assert chunk_table_partitions() == PARTITIONS


def test_a_move_to_the_current_count_does_nothing_and_bad_counts_are_refused(user):
    assert f"already has {PARTITIONS} partitions: nothing to move" in _layout("--partitions", str(PARTITIONS))
    for bad in ("0", str(MAX_PARTITIONS + 1)):
        with pytest.raises(CommandError, match=f"--partitions must be between 1 and {MAX_PARTITIONS}"):
            _layout("--partitions", bad)
    with pytest.raises(CommandError, match="--batch-rows must be at least 1"):
        _layout("--partitions", "8", "--batch-rows", "0")
    assert chunk_table_partitions() == PARTITIONS

"""Re-indexing swaps chunks in one transaction: a reader on another connection sees the old set
or the new one, never none and never both."""

import threading

import psycopg
import pytest
from django.db import connection

from apps.library.indexing import file_index, folder_index
from apps.library.models import File
from tests.support.files import write
from tests.support.servers import database_url_of_current_connection


def _version_text(version: int) -> str:
    return "\n\n".join(f"Version {version} paragraph {n}. " + "Budget line item. " * 30 for n in range(12))


@pytest.mark.django_db(transaction=True)
def test_concurrent_reader_never_sees_a_gap_or_duplicates(root, folder):
    path = write(root, "report.md", _version_text(0))
    folder_index(folder_id=folder.pk, inline=True)
    file = File.objects.get(folder=folder)
    expected = {File.objects.get(pk=file.pk).chunk_count}
    seen: list[tuple[int, int]] = []
    stop = threading.Event()

    def reader():
        with psycopg.connect(database_url_of_current_connection(), autocommit=True) as db:
            while not stop.is_set():
                seen.append(
                    db.execute(
                        "SELECT count(*), count(DISTINCT chunk_index) FROM library_chunk WHERE file_id = %s", [file.pk]
                    ).fetchone()
                )

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for version in range(1, 6):
            # Alternate sizes so old and new sets differ in count.
            path.write_text(_version_text(version) if version % 2 else "Short version.")
            folder_index(folder_id=folder.pk)
            file_index(file_id=file.pk)
            expected.add(File.objects.get(pk=file.pk).chunk_count)
    finally:
        stop.set()
        thread.join(timeout=10)
    assert len(seen) > 50 and len(expected) == 2
    assert {total for total, _ in seen} <= expected
    assert all(total == distinct for total, distinct in seen)


@pytest.mark.django_db(transaction=True)
def test_uncommitted_swap_is_invisible_to_other_connections(root, folder, monkeypatch):
    path = write(root, "report.md", _version_text(0))
    folder_index(folder_id=folder.pk, inline=True)
    file = File.objects.get(folder=folder)
    before = file.chunk_count
    from apps.library import file_steps

    real = file_steps.chunks_replace
    during = []

    def replace_then_look(**kwargs):
        real(**kwargs)
        assert connection.in_atomic_block
        with psycopg.connect(database_url_of_current_connection(), autocommit=True) as db:
            during.append(db.execute("SELECT count(*) FROM library_chunk WHERE file_id = %s", [file.pk]).fetchone()[0])

    monkeypatch.setattr(file_steps, "chunks_replace", replace_then_look)
    path.write_text("Short version.")
    folder_index(folder_id=folder.pk, inline=True)
    assert during == [before] and File.objects.get(pk=file.pk).chunk_count == 1

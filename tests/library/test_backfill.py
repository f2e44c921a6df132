import threading
import time

import pytest
from django.db import connection, connections, transaction

from apps.library.backfill import (
    search_vectors_backfill,
    search_vectors_backfill_batch,
    search_vectors_backfill_enqueue,
)
from apps.library.models import Chunk, File, Folder

ROWS = 3000


def _insert_null_chunks(user, rows: int = ROWS) -> list[int]:
    folder = Folder.objects.create(owner=user, source="local", external_id="/bf", name="bf")
    file = File.objects.create(folder=folder, external_id="f", path="f", name="f")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL folderchat.defer_search_vector = 'on'")
        cursor.execute(
            "INSERT INTO library_chunk (file_id, folder_id, chunk_index, text, location, token_count)"
            " SELECT %s, %s, n, 'invoice ' || n || ' for Dana Whitfield', '{}', 5 FROM generate_series(0, %s - 1) n",
            [file.pk, folder.pk, rows],
        )
    return list(Chunk.objects.filter(search_vector__isnull=True).values_list("id", flat=True))


def _in_thread(target, results, key):
    def run():
        try:
            results[key] = target()
        except Exception as exc:  # noqa: BLE001 - reported through results to the main thread
            results[key] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_workers_fill_every_row_exactly_once(user):
    ids = _insert_null_chunks(user)
    start = threading.Barrier(2)

    def worker():
        start.wait()
        filled = []
        while batch := search_vectors_backfill_batch(batch_size=100):
            filled.extend(chunk_id for chunk_id, _ in batch)
        return filled

    results: dict[str, object] = {}
    threads = [_in_thread(worker, results, name) for name in ("a", "b")]
    for thread in threads:
        thread.join(timeout=60)
    a, b = results["a"], results["b"]
    assert isinstance(a, list) and isinstance(b, list), results
    assert a and b  # both really worked
    assert not set(a) & set(b) and sorted(a + b) == sorted(ids)
    assert not Chunk.objects.filter(search_vector__isnull=True).exists()


@pytest.mark.django_db(transaction=True)
def test_a_worker_skips_rows_another_holds_instead_of_waiting(user):
    ids = _insert_null_chunks(user, rows=500)
    held, release = threading.Event(), threading.Event()

    def slow_worker():
        with transaction.atomic():
            taken = search_vectors_backfill_batch(batch_size=200)
            held.set()
            release.wait(timeout=10)
        return taken

    results: dict[str, object] = {}
    thread = _in_thread(slow_worker, results, "slow")
    assert held.wait(timeout=10)
    started = time.monotonic()
    result = search_vectors_backfill(batch_size=100)
    elapsed = time.monotonic() - started
    release.set()
    thread.join(timeout=10)
    assert elapsed < 1.0 and result.rows == 300
    assert len(results["slow"]) == 200 and Chunk.objects.filter(search_vector__isnull=True).count() == 0
    assert len(ids) == 500


@pytest.mark.django_db
def test_batches_shrink_to_stay_under_the_target_duration(user, settings):
    _insert_null_chunks(user, rows=2000)
    settings.BACKFILL_BATCH_TARGET_SECONDS = 0.0005
    result = search_vectors_backfill(batch_size=1000)
    assert result.rows == 2000 and result.batches > 3
    assert Chunk.objects.get(chunk_index=7).search_vector is not None


@pytest.mark.django_db
def test_a_backfill_is_queued_once_until_it_starts(monkeypatch, django_capture_on_commit_callbacks):
    from apps.core.events import redis_client

    redis_client().delete("library:backfill:queued")
    queued = []
    monkeypatch.setattr("apps.library.enqueue.backfill_search_vectors", lambda: queued.append(1))
    with django_capture_on_commit_callbacks(execute=True):
        search_vectors_backfill_enqueue()
        search_vectors_backfill_enqueue()
    assert queued == [1]
    search_vectors_backfill()  # starting clears the flag: later writers queue a new run
    with django_capture_on_commit_callbacks(execute=True):
        search_vectors_backfill_enqueue()
    assert queued == [1, 1]

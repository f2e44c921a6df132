"""A real Celery worker indexes a folder: what it counts, in its own process, reaches `/metrics`
through the shared multiprocess directory, with the worker itself among the live workers."""

from __future__ import annotations

import os

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from apps.core.queues import ALL_QUEUES
from apps.library.indexing import folder_index
from apps.library.models import File, Folder
from tests.support.documents import pdf_bytes
from tests.support.files import write
from tests.support.metrics import METRICS_TOKEN, sample, scrape
from tests.support.servers import BASE_DIR, free_port, start_celery_worker, test_database_env
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

OUTCOMES = "folderchat_files_indexed_total"


def test_a_workers_indexing_moves_the_file_and_embedding_counters(celery_worker_process, tmp_path, user, settings):
    settings.METRICS_TOKEN = METRICS_TOKEN
    settings.METRICS_WORKERS_CACHE_SECONDS = 0
    root = tmp_path / "notes"
    write(root, "lease.md", "# Lease\nThe lease renews on March 1 each year.")
    write(root, "invoice.txt", "Invoice INV-20935 from Northwind, due in 30 days.")
    write(root, "empty.txt", "   ")
    write(root, "broken.pdf", pdf_bytes(["A page."])[:200])
    folder = Folder.objects.create(owner=user, source="local", external_id=str(root), name="notes")
    before = scrape()

    folder_index(folder_id=folder.pk)
    wait_for(
        lambda: not File.objects.filter(folder=folder, status__in=["pending", "indexing"]).exists(),
        what="the folder to be indexed",
        timeout=120,
        process=celery_worker_process,
    )
    after = scrape()

    statuses = dict(File.objects.filter(folder=folder).values_list("path", "status"))
    assert statuses == {"lease.md": "indexed", "invoice.txt": "indexed", "empty.txt": "skipped", "broken.pdf": "failed"}
    moved = {
        outcome: sample(after, OUTCOMES, outcome=outcome) - sample(before, OUTCOMES, outcome=outcome)
        for outcome in ("indexed", "skipped", "failed")
    }
    assert moved == {"indexed": 2, "skipped": 1, "failed": 1}
    texts = "folderchat_embedded_texts_total"
    assert sample(after, texts, provider="hash") - sample(before, texts, provider="hash") >= 2
    assert sample(after, "folderchat_embedding_seconds_count", provider="hash") > sample(
        before, "folderchat_embedding_seconds_count", provider="hash"
    )
    assert sample(after, "folderchat_queue_workers", queue="indexing") >= 1


def test_a_worker_apart_from_the_web_serves_its_own_counters(transactional_db, tmp_path, user, settings):
    """A worker in its own container writes to its own multiprocess directory, which the web's
    scrape never reads: its WORKER_METRICS_PORT serves what its processes counted."""
    port = free_port()
    env = test_database_env(
        EMBEDDING_PROVIDER="hash",
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "worker-metrics"),
        WORKER_METRICS_PORT=str(port),
        WORKER_METRICS_ADDRESS="127.0.0.1",
    )
    (tmp_path / "worker-metrics").mkdir()
    root = tmp_path / "notes"
    write(root, "lease.md", "# Lease\nThe lease renews on March 1 each year.")
    folder = Folder.objects.create(owner=user, source="local", external_id=str(root), name="notes")
    with start_celery_worker(
        env=env, queues=ALL_QUEUES, log_path=BASE_DIR / "var" / f"test-worker-metrics-{os.getpid()}.log"
    ) as worker:
        folder_index(folder_id=folder.pk)
        wait_for(
            lambda: File.objects.filter(folder=folder, status="indexed").exists(),
            what="the file to be indexed",
            timeout=120,
            process=worker,
        )
        body = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    samples = {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
    }
    # At least this folder's file (the worker may also have finished tasks an earlier test left queued).
    assert sample(samples, OUTCOMES, outcome="indexed") >= 1

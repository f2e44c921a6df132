"""What bench/ingest/ingest_scale.py measures besides the product's own series: CPU seconds of the
worker processes and of the database's backends, the stage histograms read back from a metrics
directory, and the embedder alone on the folder's chunk texts (its rate and CPU per text)."""

from __future__ import annotations

import multiprocessing
import os
import random
import threading
import time
from pathlib import Path
from typing import Any

BASELINE_SLICE = 2048


class DatabaseCpu:
    """CPU seconds of the scratch database's backends but this process's own. Workers open one per
    task (CONN_MAX_AGE 0), so a thread reads them every second and keeps each backend's last
    reading: a backend's last second is missed, the figure is a lower bound."""

    def __init__(self) -> None:
        from django.db import connection

        connection.ensure_connection()
        self._name = f" {connection.settings_dict['NAME']} "
        self._own = connection.connection.info.backend_pid
        self._seen: dict[int, float] = {}
        self._autovacuum: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @property
    def seconds(self) -> float:
        return sum(self._seen.values())

    @property
    def autovacuum_seconds(self) -> float:
        """Of ``seconds``, the autovacuum workers' (VACUUM and ANALYZE of the growing tables)."""
        return sum(self._seen[pid] for pid in self._autovacuum)

    def __enter__(self) -> DatabaseCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        import psutil

        while True:
            for process in psutil.process_iter(["cmdline", "cpu_times"]):
                title = " ".join(process.info["cmdline"] or [])
                if process.pid != self._own and process.info["cpu_times"] and self._name in f"{title} ":
                    self._seen[process.pid] = sum(process.info["cpu_times"][:2])
                    if "autovacuum" in title:
                        self._autovacuum.add(process.pid)
            if self._stop.wait(1.0):
                return


def stage_seconds(metrics: Path) -> dict[str, tuple[float, int]]:
    """Each stage's seconds and observations, summed over every process that wrote to ``metrics``."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(metrics))
    sums: dict[str, list[float]] = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name.startswith("folderchat_indexing_stage_seconds_"):
                stage = sample.labels["stage"]
            elif sample.name.startswith("folderchat_embedding_seconds_"):
                stage = "embed"
            else:
                continue
            kind = sample.name.rsplit("_", 1)[1]
            if kind in ("sum", "count"):
                sums.setdefault(stage, [0.0, 0.0])[kind == "count"] += sample.value
    return {stage: (values[0], int(values[1])) for stage, values in sums.items()}


def sample_texts(root: Path, *, limit: int, seed: int) -> list[str]:
    """The chunk texts of files drawn at random until ``limit``, by the product's parser and chunker."""
    from apps.connectors.local import LocalSource
    from apps.library.chunking import chunk_document
    from apps.library.parsing import parse_document

    source = LocalSource(root)
    entries = list(source.list_entries())
    random.Random(seed).shuffle(entries)
    texts: list[str] = []
    for entry in entries:
        if len(texts) >= limit:
            break
        data, mime_type = source.read_bytes(entry)
        document = parse_document(data=data, mime_type=mime_type, name=entry.name)
        texts.extend(piece.text for piece in chunk_document(document=document))
    return texts


def model_rate(texts: list[str], *, processes: int, threads: int, nice: int) -> tuple[float, float]:
    """Texts per second of ``processes`` spawned processes encoding equal shares at once, and
    their CPU seconds per text."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(processes)
    spans: multiprocessing.Queue[tuple[float, float, float]] = context.Queue()
    shares = [texts[share::processes] for share in range(processes)]
    workers = [context.Process(target=_encode_share, args=(share, threads, nice, barrier, spans)) for share in shares]
    for worker in workers:
        worker.start()
    measured = [spans.get() for _ in workers]
    for worker in workers:
        worker.join()
    wall = max(end for _, end, _ in measured) - min(start for start, _, _ in measured)
    return len(texts) / wall, sum(cpu for _, _, cpu in measured) / len(texts)


def _encode_share(
    texts: list[str],
    threads: int,
    nice: int,
    barrier: Any,
    spans: multiprocessing.Queue[tuple[float, float, float]],
) -> None:
    os.nice(nice)
    os.environ["EMBEDDING_THREADS"] = str(threads)
    import django

    django.setup()
    from apps.embeddings.providers import get_embedder

    embedder = get_embedder()
    embedder.embed_documents(texts[:64])  # loads and warms the model
    barrier.wait()
    started, cpu = time.monotonic(), time.process_time()  # CLOCK_MONOTONIC: comparable across processes
    for start in range(0, len(texts), BASELINE_SLICE):
        embedder.embed_documents(texts[start : start + BASELINE_SLICE])
    spans.put((started, time.monotonic(), time.process_time() - cpu))

"""What the ingestion benches share: the chunk HNSW statements, a timing line, Django without a
database, a Zipf-like vocabulary for generated text, and waiting for a folder's workers to finish."""

from __future__ import annotations

import itertools
import os
import random
import time

from apps.library import vector_index

# The chunk embeddings' HNSW index (one graph per partition), as the partition move builds it.
CREATE_HNSW = [vector_index.create_index_sql()]
DROP_HNSW = [vector_index.drop_index_sql()]


def timed(label: str, seconds: float, rows: int | None = None) -> None:
    rate = f"  {rows / seconds:10.0f} rows/s" if rows else ""
    print(f"  {label:<58} {seconds:8.2f} s{rate}")


def django_without_database() -> None:
    """Set Django up for a bench that only parses: settings want a database URL to exist, none is opened."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DATABASE_URL", "postgres://bench@127.0.0.1/unused")
    import django

    django.setup()


def vocabulary(rng: random.Random, size: int = 6000) -> tuple[list[str], list[float]]:
    """Made-up words and their cumulative Zipf-like weights (rank r weighs 1/r, as real text)."""
    syllables = ["ka", "lo", "mi", "ser", "ta", "ven", "dor", "pel", "ri", "no", "qua", "fin", "tax", "bud", "get"]
    words = sorted({"".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(size * 2)})[:size]
    # Cumulative: random.choices then bisects instead of summing every weight on each call.
    return words, list(itertools.accumulate(1 / (rank + 1) for rank in range(len(words))))


def random_sentences(rng: random.Random, words: list[str], cum_weights: list[float], count: int) -> list[str]:
    out = []
    for _ in range(count):
        chosen = rng.choices(words, cum_weights=cum_weights, k=rng.randint(8, 16))
        out.append(" ".join(chosen).capitalize() + rng.choice([".", ".", ".", "?", "!"]))
    return out


def indexed_wait(folder_id: int, *, started: float, timeout: float) -> float:
    """Seconds since ``started`` (time.monotonic) until the folder's listing job has succeeded and
    none of its files is pending or indexing; progress every 15 s; gives up after ``timeout``."""
    from apps.library.models import File, IndexingJob, JobKind, JobStatus
    from apps.library.selectors import folder_files_in_progress

    last_print = 0.0
    while True:
        elapsed = time.monotonic() - started
        listed = IndexingJob.objects.filter(
            folder_id=folder_id, kind=JobKind.INDEX_FOLDER, status=JobStatus.SUCCEEDED
        ).exists()
        open_files = File.objects.filter(folder_id=folder_id, status__in=["pending", "indexing"]).count()
        if listed and open_files == 0:
            return elapsed
        if elapsed - last_print >= 15:
            last_print = elapsed
            done = File.objects.filter(folder_id=folder_id).exclude(status__in=["pending", "indexing"]).count()
            working = ", ".join(path for path, _ in folder_files_in_progress(folder_id=folder_id, limit=2))
            print(f"  {elapsed:6.0f} s: {done} files done, {open_files} open; working on: {working or '-'}")
        if elapsed > timeout:
            print(f"gave up after {timeout:.0f} s")
            return elapsed
        time.sleep(0.5)

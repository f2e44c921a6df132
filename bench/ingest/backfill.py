"""Backfill: the batched search-vector backfill against one big UPDATE over the same table.

The table is loaded twice with the same rows (text, embeddings, NULL search vectors; HNSW and
GIN in place as in production). Run 1 fills them with a single UPDATE, run 2 with the batched
backfill service. Target: batched rows/s >= 0.7 of the single UPDATE, no batch over 1 s.

    .venv/bin/python bench/ingest/backfill.py [--rows 20000] [--without-hnsw]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.common.scratch import scratch_services
from bench.ingest.common import CREATE_HNSW, DROP_HNSW, timed

_WORD_TEXT = (
    "invoice payment tax return budget report meeting project client deadline contract lease rent salary "
    "account bank statement transfer receipt expense travel flight hotel insurance policy claim doctor "
    "appointment school course software license subscription renewal quarter annual review summary plan "
    "design launch release customer support ticket metric growth revenue cost savings fund estimate form"
)
_WORDS = tuple(_WORD_TEXT.split())


def _texts(count: int, rng: random.Random) -> list[str]:
    return [" ".join(rng.choices(_WORDS, k=200)) + f" INV-{20000 + n} Q{1 + n % 4}-2024." for n in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--without-hnsw", action="store_true", help="measure with the HNSW index dropped")
    args = parser.parse_args()
    with scratch_services("bench_backfill"):
        run(args.rows, keep_hnsw=not args.without_hnsw)


def run(rows: int, *, keep_hnsw: bool) -> None:
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from apps.library import backfill
    from apps.library.chunk_store import chunks_replace
    from apps.library.chunking import ChunkPiece
    from apps.library.models import File, Folder

    rng = random.Random(3)
    texts = _texts(rows, rng)
    vectors = np.random.default_rng(3).standard_normal((rows, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    owner = get_user_model().objects.create_user(username="bench")
    folder = Folder.objects.create(owner=owner, source="local", external_id="/bench", name="bench")
    per_file = 100
    files = File.objects.bulk_create(
        File(folder=folder, external_id=f"f{n}", path=f"f{n}.txt", name=f"f{n}.txt") for n in range(rows // per_file)
    )

    def load() -> None:
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE library_chunk")
            for statement in DROP_HNSW:
                cursor.execute(statement)
            started = time.monotonic()
            with transaction.atomic():
                cursor.execute("SET LOCAL folderchat.defer_search_vector = 'on'")
                for index, file in enumerate(files):
                    span = slice(index * per_file, (index + 1) * per_file)
                    pieces = [ChunkPiece(n, text, 200, {}) for n, text in enumerate(texts[span])]
                    chunks_replace(file_id=file.pk, folder_id=folder.pk, pieces=pieces, vectors=vectors[span])
            if keep_hnsw:
                for statement in CREATE_HNSW:
                    cursor.execute(statement)
            cursor.execute("VACUUM ANALYZE library_chunk")
        print(
            f"  loaded {rows} rows with NULL search vectors{' + HNSW' if keep_hnsw else ''} "
            f"in {time.monotonic() - started:.1f} s"
        )

    def null_count() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM library_chunk WHERE search_vector IS NULL")
            return cursor.fetchone()[0]

    print(f"table: library_chunk, GIN on search_vector{', HNSW on embedding' if keep_hnsw else ''}")
    load()
    started = time.monotonic()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE library_chunk SET search_vector = to_tsvector('english', text) WHERE search_vector IS NULL"
        )
    t_single = time.monotonic() - started
    assert null_count() == 0
    timed("one UPDATE over the whole table (one transaction)", t_single, rows)

    load()
    batch_seconds = []
    real_batch = backfill.search_vectors_backfill_batch

    def timed_batch(**kwargs):
        began = time.monotonic()
        filled = real_batch(**kwargs)
        batch_seconds.append(time.monotonic() - began)
        return filled

    backfill.search_vectors_backfill_batch = timed_batch
    started = time.monotonic()
    result = backfill.search_vectors_backfill()
    t_batched = time.monotonic() - started
    backfill.search_vectors_backfill_batch = real_batch
    assert null_count() == 0 and result.rows == rows
    t_batches = sum(batch_seconds)
    timed(f"batched backfill, whole run ({result.batches} batches, SKIP LOCKED)", t_batched, rows)
    timed("  of which the batch transactions", t_batches, rows)
    timed("  of which the keyword-statistics refresh and the loop", t_batched - t_batches)
    ordered = sorted(batch_seconds)
    p50, p95 = ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.95)]
    print(f"  batch transactions: p50 {p50:.3f} s, p95 {p95:.3f} s, longest {ordered[-1]:.3f} s (limit 1 s)")
    # The statistics refresh follows either way (a single UPDATE needs it too): compare like with like.
    print(f"  batched / single rows/s, same work (batches only): {t_single / t_batches:.2f} (target >= 0.7)")
    print(f"  batched / single rows/s, whole run: {t_single / t_batched:.2f}")


if __name__ == "__main__":
    main()

"""What the chat benches share: the scratch database and Redis db, a seeded folder, the questions.

``use_scratch_services`` points Django at ``bench_chat`` (created when missing and kept between
runs) and Redis db 9; ``seeded_folder`` fills a folder with synthetic chunks once and reuses it.
"""

from __future__ import annotations

import os
import random
import time

from bench.common.scratch import kept_database

SCRATCH_DB = "bench_chat"
SCRATCH_REDIS_DB = 9
CHUNKS_PER_FILE = 100
WORDS_PER_CHUNK = 60
ANSWER = (
    "According to the quarterly report, revenue grew by twelve percent while operating costs stayed flat [1]. "
    "The board approved the budget for the next year and asked for a review of the supplier contracts [2]. "
    "Headcount is expected to rise slightly in the second half [1]."
)


def use_scratch_services() -> None:
    """Point Django at the scratch database and Redis db (created when missing), then set it up."""
    kept_database(
        SCRATCH_DB,
        redis_db=SCRATCH_REDIS_DB,
        EMBEDDING_PROVIDER=os.environ.get("EMBEDDING_PROVIDER", "hash"),
        LLM_PROVIDER="scripted",
        LOG_LEVEL="WARNING",
    )


def bench_user(username: str):
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username=username)
    return user


def seeded_folder(*, chunks: int):
    """A folder holding exactly `chunks` synthetic chunks, never due for a sync."""
    import datetime as dt

    from django.db import connection
    from django.utils import timezone

    from apps.embeddings.providers import get_embedder
    from apps.library.models import Chunk, File, Folder
    from apps.search.services import folder_lexeme_stats_refresh

    folder, _ = Folder.objects.get_or_create(
        owner=bench_user("bench-chat"),
        source="local",
        external_id=f"/bench/chat-{chunks}",
        defaults={"name": f"bench {chunks}", "status": "ready", "sync_interval_seconds": 10**9},
    )
    Folder.objects.filter(pk=folder.pk).update(last_synced_at=timezone.now() + dt.timedelta(days=3650))
    if Chunk.objects.filter(folder=folder).count() == chunks:
        return folder
    print(f"seeding {chunks} chunks (once)...", flush=True)
    File.objects.filter(folder=folder).delete()
    vocabulary = _vocabulary()
    rng = random.Random(42)
    embedder = get_embedder("hash")
    started = time.perf_counter()
    for first in range(0, chunks, CHUNKS_PER_FILE):
        count = min(CHUNKS_PER_FILE, chunks - first)
        index = first // CHUNKS_PER_FILE
        file = File.objects.create(
            folder=folder,
            external_id=f"f{index}",
            path=f"docs/{index % 50}/report-{index}.txt",
            name=f"report-{index}.txt",
            status="indexed",
            chunk_count=count,
        )
        texts = [" ".join(rng.choices(vocabulary, k=WORDS_PER_CHUNK)) + "." for _ in range(count)]
        vectors = embedder.embed_documents(texts)
        Chunk.objects.bulk_create(
            Chunk(
                file=file,
                folder=folder,
                chunk_index=i,
                text=text,
                embedding=vector.tolist(),
                location={"page": i // 3 + 1},
                token_count=WORDS_PER_CHUNK,
            )
            for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
        )
        if index % 100 == 99:
            print(f"  {first + count} chunks, {time.perf_counter() - started:.0f} s", flush=True)
    folder_lexeme_stats_refresh(folder_id=folder.pk)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE library_chunk")
    return folder


def _vocabulary() -> list[str]:
    common = COMMON_WORDS.split()
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    rare = ["".join(rng.choices(letters, k=rng.randint(4, 9))) for _ in range(20000)]
    return common * 40 + rare


COMMON_WORDS = (
    "revenue budget contract supplier quarterly report invoice payment tax salary project deadline meeting "
    "review policy insurance travel receipt employee customer product launch marketing growth forecast risk "
    "audit compliance board approval hiring headcount office lease renewal warranty shipment inventory"
)
QUESTIONS = [
    "What did the quarterly report say about revenue growth?",
    "When is the office lease renewal due?",
    "Which supplier contract needs review?",
    "How much tax was paid on the last invoice?",
    "What is the hiring plan and headcount forecast?",
    "Summarise the audit and compliance risks.",
    "What was approved by the board for the marketing budget?",
    "Is there a warranty on the last shipment?",
]


def pct(values: list[float], percentile: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(percentile / 100 * (len(ordered) - 1)))]

"""Our own overhead per standard-mode answer (search + prompt + persist + events), no model time.

A scripted provider answers instantly, so what is timed is everything around the model: the run
claim, hybrid search over a folder of 100k chunks, history, prompt, streaming the answer as
events, saving the message and run, `message` + `done`. Target: p95 <= 100 ms.

`--metered` compares, in one run and alternating answer by answer, the same answers with the model
call metered as the network providers' are (`apps.llm.usage.metered_call`: the budget checked in
Redis before, the usage recorded and counted for Prometheus after, with both budgets set) against
the plain call. Target: metering adds <= 5 ms at p95.

Runs against a scratch database (`bench_chat`) and Redis db 9 on the embedded servers, never the
development data. The folder is seeded once (a few minutes) and reused.

    .venv/bin/python bench/chat_overhead.py [--chunks 100000] [--answers 200] [--metered]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
sys.path.insert(0, str(BASE_DIR / "bench"))

from machine import cpu  # noqa: E402
from scratch import kept_database  # noqa: E402

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


def scripted_provider(*, metered: bool):
    """The scripted model; `metered`: its call goes through `metered_call` as OpenAI's and Anthropic's do."""
    from apps.llm.scripted import ScriptedProvider
    from apps.llm.usage import metered_call

    class MeteredScriptedProvider(ScriptedProvider):
        def complete(self, **request):
            plain = super().complete
            return metered_call(provider="scripted", model=self.model, call=lambda: plain(**request))

    return (MeteredScriptedProvider if metered else ScriptedProvider)(model="scripted-bench")


def answer_times(
    *, folder, provider, answers: int, warmup: int, turn: int = 0
) -> tuple[list[float], list[float], list[int]]:
    """Each answer's total and search milliseconds and its event count; one conversation per four turns."""
    from apps.chat.services import chat_start, run_execute
    from apps.llm.factory import use_provider_for_tests
    from apps.llm.types import LLMResponse, Usage

    totals: list[float] = []
    searches: list[float] = []
    events: list[int] = []
    conversation = None
    with use_provider_for_tests(provider):
        for i in range(warmup + answers):
            provider.push(LLMResponse(text=ANSWER, usage=Usage(input_tokens=900, output_tokens=60)))
            counted: list[object] = []
            started = time.perf_counter()
            run = chat_start(
                user=folder.owner, folder=folder, text=QUESTIONS[(turn + i) % len(QUESTIONS)], conversation=conversation
            )
            run = run_execute(run_id=run.pk, on_event=counted.append)
            elapsed = (time.perf_counter() - started) * 1000
            assert run.status == "completed", run.error
            # Four turns per conversation, so history is read and sent as it would be.
            conversation = run.conversation if i % 4 != 3 else None
            if i >= warmup:
                totals.append(elapsed)
                searches.append(run.metrics["search_ms"])
                events.append(len(counted))
    return totals, searches, events


def measure_metered(*, folder, answers: int, warmup: int) -> None:
    """Plain and metered answers in alternating rounds of eight, so drift touches both alike."""
    from django.conf import settings

    settings.LLM_DAILY_TOKENS_PER_USER = 10**12  # checked on every call, never reached
    settings.LLM_MONTHLY_COST_PER_USER = 10**9
    settings.LLM_PRICES = {"scripted-bench": {"input": 2.0, "output": 10.0, "cached": 0.5}}
    timings: dict[bool, list[float]] = {False: [], True: []}
    answer_times(folder=folder, provider=scripted_provider(metered=True), answers=0, warmup=warmup)
    answer_times(folder=folder, provider=scripted_provider(metered=False), answers=0, warmup=warmup)
    for round_ in range(max(1, answers // 8)):
        for metered in (round_ % 2 == 0, round_ % 2 == 1):
            totals, _, _ = answer_times(
                folder=folder, provider=scripted_provider(metered=metered), answers=4, warmup=0, turn=round_
            )
            timings[metered].extend(totals)
    print(f"answers measured: {len(timings[False])} plain, {len(timings[True])} metered (alternating)")
    for label, values in (("plain model call", timings[False]), ("metered (budget+usage+metrics)", timings[True])):
        print(f"{label:32s} p50 {_pct(values, 50):7.1f} ms   p95 {_pct(values, 95):7.1f} ms")
    added = _pct(timings[True], 95) - _pct(timings[False], 95)
    added_p50 = _pct(timings[True], 50) - _pct(timings[False], 50)
    print(f"metering adds p50 {added_p50:+.1f} ms, p95 {added:+.1f} ms")
    print(f"target: metering adds <= 5 ms at p95: {'PASS' if added <= 5 else 'FAIL'}")


def measure(*, folder, answers: int, warmup: int) -> None:
    totals, searches, events = answer_times(
        folder=folder, provider=scripted_provider(metered=False), answers=answers, warmup=warmup
    )
    others = [total - search for total, search in zip(totals, searches, strict=True)]
    print(f"answers measured: {answers} (after {warmup} warm-up), events per answer: {statistics.median(events):.0f}")
    for label, values in (
        ("total overhead", totals),
        ("  search (incl. history+prompt)", searches),
        ("  claim+events+persist", others),
    ):
        print(
            f"{label:32s} p50 {_pct(values, 50):7.1f} ms   p95 {_pct(values, 95):7.1f} ms   max {max(values):7.1f} ms"
        )
    verdict = "PASS" if _pct(totals, 95) <= 100 else "FAIL"
    print(f"target p95 <= 100 ms: {verdict}")


def _pct(values: list[float], percentile: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(percentile / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--answers", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--metered", action="store_true", help="compare metered and plain model calls")
    args = parser.parse_args()
    use_scratch_services()
    folder = seeded_folder(chunks=args.chunks)
    from apps.library.models import Chunk

    print(cpu(), f"({os.cpu_count()} cores)")
    print(
        f"folder {folder.pk}: {Chunk.objects.filter(folder=folder).count()} chunks; "
        f"embedder {os.environ['EMBEDDING_PROVIDER']}"
    )
    if args.metered:
        measure_metered(folder=folder, answers=args.answers, warmup=args.warmup)
    else:
        measure(folder=folder, answers=args.answers, warmup=args.warmup)


if __name__ == "__main__":
    main()

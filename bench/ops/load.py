"""Issue 10's load scenario: search and chat streams while a 2,000-file folder indexes.

Real processes on loopback: uvicorn (config.asgi), one Celery worker on `indexing` and one on
`agent`, against a scratch database and a Redis db of their own, dropped and flushed at the end.
A small folder is indexed first; then a generated folder of `--files` small text/markdown files is
connected through the API, which queues its indexing on Celery. While it indexes, for `--seconds`:
8 clients search the small folder (hybrid, k=10, varied queries) and 20 clients chat with it (POST
a message, follow the run's SSE stream to its terminal event). The `scripted` provider answers at
once, so what is timed is the app, not a model.

Lost events: after the window every stream's event ids are compared with the run's log in Redis
(what the SSE view replays) and the run as saved in the database. Targets: zero 5xx, no lost events.

    .venv/bin/python bench/ops/load.py [--seconds 60] [--files 2000] [--search-clients 8] [--chat-clients 20]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from apps.core.events import Event

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.common.scratch import scratch_redis_url, scratch_services
from bench.ops.load_clients import (
    TERMINAL,
    ChatStream,
    Results,
    Window,
    chat_client,
    chat_once,
    progress_sampler,
    search_client,
)

# Its own Redis db (broker + events): the other benches use 9, 10 and 15, the test suite 1 (or
# TEST_REDIS_DB); `--redis-db` picks another, and a db that is not empty is refused.
REDIS_DB = 14
LOG_DIR = Path(tempfile.gettempdir()) / "bench-load-logs"
SMALL_FILES = 100
# After the window, streams still open get this long to reach their terminal event.
DRAIN_SECONDS = 30
# An event published this long before a client stopped reading should have reached it.
LOST_GRACE_SECONDS = 1.0
# 2 cores: indexing is CPU-bound, so one solo process, leaving a core for uvicorn, PostgreSQL,
# Redis and the clients. Runs get two prefork children, as the Procfile's worker has: twice the
# runs/s of one solo process here, while a threads pool took its tasks in batches ~1 s apart.
AGENT_POOL = "prefork"
AGENT_CONCURRENCY = 2
SCRIPTED_WORKER_ENV = "BENCH_LOAD_SCRIPTED_WORKER"
SCRIPTED_ANSWERS = 100_000
STARTED = time.monotonic()
SYLLABLES = ("ka", "lo", "mi", "ser", "ta", "ven", "dor", "pel", "ri", "no", "qua", "fin", "tax", "bud", "get")


# --- the agent worker's answers ---------------------------------------------------------------


def _script_answers() -> None:
    """Queue answers on the shared scripted provider of this (worker) process.

    LLM_PROVIDER=scripted hands every run one ScriptedProvider, empty in a new process; the bench's
    agent worker imports this module (`--include bench.ops.load`) so it has an answer for every run.
    """
    from apps.llm.factory import SHARED_SCRIPTED
    from apps.llm.types import LLMResponse, Usage
    from bench.chat.common import ANSWER

    answer = LLMResponse(text=ANSWER, usage=Usage(input_tokens=900, output_tokens=60))
    SHARED_SCRIPTED.push(*[answer] * SCRIPTED_ANSWERS)


if os.environ.get(SCRIPTED_WORKER_ENV) == "1" and __name__ != "__main__":
    _script_answers()


# --- scratch services, data and processes -----------------------------------------------------


def step(message: str) -> None:
    """A setup step, stamped with the seconds since the bench started."""
    print(f"[{time.monotonic() - STARTED:4.0f} s] {message}", flush=True)


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


@contextlib.contextmanager
def load_services(corpus_root: Path, *, redis_db: int) -> Iterator[str]:
    """The bench's scratch services (bench/common/scratch.py) on a Redis db nothing else is using."""
    import redis

    if redis.Redis.from_url(scratch_redis_url(redis_db)).dbsize():
        raise SystemExit(f"Redis db {redis_db} is not empty, so something else uses it: choose another (--redis-db).")
    # Inherited by uvicorn and the workers. Throttles are raised: the clients share one user.
    with scratch_services(
        "bench_load",
        redis_db=redis_db,
        EMBEDDING_PROVIDER="hash",
        LLM_PROVIDER="scripted",
        LOCAL_FOLDER_ROOTS=str(corpus_root),
        THROTTLE_SEARCH="1000000/min",
        THROTTLE_CHAT="1000000/min",
        LOG_LEVEL="WARNING",
    ) as database:
        yield database


def write_notes(root: Path, *, files: int, words: int, seed: int) -> None:
    """Small text and markdown notes in nested folders, words drawn Zipf-like as in real text.

    The vocabulary is built as `ingest_pipeline` builds it; its `make_corpus` also writes pdf, docx,
    html and csv, and spends a minute on 2,000 files on a loaded machine (weights summed per draw).
    """
    rng = random.Random(seed)
    vocabulary = sorted({"".join(rng.choices(SYLLABLES, k=rng.randint(1, 4))) for _ in range(12000)})[:6000]
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(vocabulary))))
    for index in range(files):
        folder = root / f"area{index % 10}" / f"year{2015 + index % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        drawn = rng.choices(vocabulary, cum_weights=cumulative, k=words)
        sentences = [" ".join(drawn[i : i + 12]).capitalize() + "." for i in range(0, words, 12)]
        if index % 2:
            (folder / f"note{index}.txt").write_text("\n\n".join(sentences) + "\n")
        else:
            sections = (
                f"## Topic {n // 10}\n\n" + " ".join(sentences[n : n + 10]) for n in range(0, len(sentences), 10)
            )
            (folder / f"note{index}.md").write_text(f"# Note {index}\n\n" + "\n\n".join(sections) + "\n")


def library_setup(small_dir: Path) -> tuple[str, int]:
    """A user with an API token, and the small folder indexed in this process; (token, folder id)."""
    from django.contrib.auth import get_user_model

    from apps.core.tokens import personal_token_create
    from apps.library.indexing import folder_index
    from apps.library.models import Chunk, Folder
    from apps.library.services import folder_create

    user = get_user_model().objects.create_user(username="bench-load")
    _, secret = personal_token_create(user=user, name="load bench", scopes=["read", "search", "chat", "manage"])
    folder = folder_create(owner=user, source="local", external_id=str(small_dir), start_indexing=False)
    folder_index(folder_id=folder.pk, inline=True)
    # Never due for a sync, which a chat would otherwise queue.
    Folder.objects.filter(pk=folder.pk).update(sync_interval_seconds=10**9)
    folder.refresh_from_db()
    chunks = Chunk.objects.filter(folder=folder).count()
    step(f"searched folder: {folder.files_indexed}/{folder.files_total} files indexed inline, {chunks} chunks")
    return secret, folder.pk


def phrases(root: Path, *, count: int, seed: int) -> list[str]:
    """Runs of 2-4 words from the folder's own text files, so that searches match something."""
    rng = random.Random(seed)
    files = [path.read_text().split() for path in sorted(root.rglob("*")) if path.suffix in (".txt", ".md")]
    out = []
    for _ in range(count):
        words = rng.choice(files)
        length = rng.randint(2, 4)
        start = rng.randrange(max(1, len(words) - length))
        out.append(" ".join(word.strip(".?!#").lower() for word in words[start : start + length]))
    return out


@contextlib.contextmanager
def running_stack(*, agent_pool: str, agent_concurrency: int) -> Iterator[str]:
    """uvicorn and the two Celery workers on the scratch services; yields the server's URL."""
    from tests.support.servers import start_celery_worker, start_uvicorn

    env = dict(os.environ)
    LOG_DIR.mkdir(exist_ok=True)
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(start_uvicorn(env=env, log_path=LOG_DIR / "uvicorn.log", log_level="warning"))
        stack.enter_context(
            start_celery_worker(
                env=env,
                queues=["indexing", "indexing_small"],
                log_path=LOG_DIR / "worker-indexing.log",
                name="bench-load-indexing",
            )
        )
        stack.enter_context(
            start_celery_worker(
                env={**env, SCRIPTED_WORKER_ENV: "1"},
                queues=["agent"],
                log_path=LOG_DIR / "worker-agent.log",
                name="bench-load-agent",
                # Given after the helper's --pool=solo, so these win.
                extra_args=[f"--pool={agent_pool}", f"--concurrency={agent_concurrency}", "--include=bench.ops.load"],
            )
        )
        yield server.url


async def warm_up(client: httpx.AsyncClient, folder_id: int, query: str) -> None:
    """One search and one chat, unmeasured, so the window does not time first-request imports."""
    response = await client.post(f"/api/folders/{folder_id}/search", json={"query": query, "mode": "hybrid"})
    response.raise_for_status()
    stream = ChatStream(started=time.monotonic())
    await asyncio.wait_for(chat_once(client, folder_id, f"What about {query}?", stream), 60)
    if stream.terminal != "done":
        log = (LOG_DIR / "worker-agent.log").read_text()[-3000:]
        raise SystemExit(f"warm-up chat ended with {stream.terminal or stream.failure!r}; agent worker log:\n{log}")


async def run_load(url: str, token: str, folder_id: int, corpus: Path, args: argparse.Namespace) -> Results:
    results = Results()
    queries = phrases(corpus.parent / "small", count=500, seed=3)
    limits = httpx.Limits(max_connections=args.search_clients + args.chat_clients + 4)
    headers = {"Authorization": f"Bearer {token}"}
    timeout = httpx.Timeout(30, connect=10)  # reads above SSE_HEARTBEAT_SECONDS (15 s)
    step("servers up")
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=timeout, limits=limits) as client:
        await warm_up(client, folder_id, queries[0])
        response = await client.post("/api/folders", json={"source": "local", "path": str(corpus)})
        if response.status_code != 201:
            raise SystemExit(f"connecting the folder to index answered {response.status_code}: {response.text}")
        indexed_id = response.json()["id"]
        step(
            f"indexing folder {indexed_id} queued through the API; window of {args.seconds} s starts; {load_average()}"
        )
        start = time.monotonic()
        window = Window(start=start, end=start + args.seconds, drain_end=start + args.seconds + DRAIN_SECONDS)
        results.window = window
        await asyncio.gather(
            progress_sampler(client, indexed_id, window, results),
            *(search_client(client, folder_id, queries, n, window, results) for n in range(args.search_clients)),
            *(chat_client(client, folder_id, queries, 100 + n, window, results) for n in range(args.chat_clients)),
        )
    return results


# --- checking and reporting -------------------------------------------------------------------


def lost_reason(stream: ChatStream, log: list[Event], run: tuple[str, int | None] | None) -> str:
    """Why this stream lost events ("" when it did not): `log` is the run's events in Redis."""
    published = []
    for event in log:
        published.append(event)
        if event.type in TERMINAL:
            break
    if stream.unsaved:
        return f"server sent {stream.unsaved} without ids: the run's log was missing"
    if stream.ids != [event.id for event in published[: len(stream.ids)]]:
        received = set(stream.ids)
        missing = [event.type for event in published if event.id not in received]
        return f"its {len(stream.ids)} events are not the log's first ones: missing {missing}, or repeated or reordered"
    if stream.terminal == "done":
        if stream.text != stream.message_text:
            return "its text deltas do not add up to the message"
        if run is None or run != ("completed", stream.message_id):
            return f"`done` received, but the run is saved as {run} (status, answer id)"
        return ""
    if stream.terminal:
        return ""
    # No terminal event: lost only what was published well before the client stopped reading.
    missed = [
        e
        for e in published[len(stream.ids) :]
        if int(e.id.split("-")[0]) / 1000 < stream.stopped_at - LOST_GRACE_SECONDS
    ]
    if missed:
        return f"{[e.type for e in missed]} published before the client stopped ({stream.failure}) never reached it"
    return ""


def lost_streams(streams: list[ChatStream]) -> list[tuple[ChatStream, str]]:
    from apps.chat.models import AgentRun
    from apps.core.events import events_after, redis_client, run_channel

    followed = [stream for stream in streams if stream.run_id]
    runs = {
        str(pk): (status, answer_id)
        for pk, status, answer_id in AgentRun.objects.filter(pk__in=[s.run_id for s in followed]).values_list(
            "pk", "status", "answer_id"
        )
    }
    client = redis_client()
    lost = []
    for stream in followed:
        log = events_after(channel=run_channel(stream.run_id), client=client)
        reason = lost_reason(stream, log, runs.get(stream.run_id))
        if reason:
            lost.append((stream, reason))
    return lost


def pct(values: list[float], percentile: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(percentile / 100 * (len(ordered) - 1)))] if ordered else float("nan")


def spread(values: list[float]) -> str:
    return (
        f"p50 {pct(values, 50):7.1f} ms  p95 {pct(values, 95):7.1f} ms  max {max(values, default=float('nan')):7.1f} ms"
    )


def report(results: Results, lost: list[tuple[ChatStream, str]], args: argparse.Namespace) -> bool:
    seconds = args.seconds
    print(
        f"\n== {seconds} s: {args.search_clients} search clients + {args.chat_clients} chat streams, while indexing =="
    )
    print(
        f"processes: uvicorn x1 (config.asgi); celery -Q indexing: solo pool x1; celery -Q agent: "
        f"{args.agent_pool} x{args.agent_concurrency}; embedder hash; LLM scripted; throttles raised; logs in {LOG_DIR}"
    )
    print(
        f"search   {results.searches_in_window / seconds:7.1f} req/s  ({results.searches_in_window} answered "
        f"in the window)   latency {spread(results.search_ms)}"
    )
    chats = results.chats
    ended = [s for s in chats if s.terminal]
    window_end = results.window.end if results.window else 0.0
    in_window = [s for s in ended if s.terminal == "done" and s.started + (s.final_event_s or 0) <= window_end]
    firsts = [s.first_event_s * 1000 for s in chats if s.first_event_s is not None]
    finals = [s.final_event_s * 1000 for s in ended if s.final_event_s is not None]
    print(f"chat     {len(in_window) / seconds:7.1f} runs/s ({len(in_window)} done in the window)")
    print(f"  POST -> first event  {spread(firsts)}")
    print(f"  POST -> final event  {spread(finals)}")
    outcomes = Counter(s.terminal or "no terminal event" for s in chats)
    print(f"  streams: {len(chats)}, ended with: {dict(outcomes)}")
    progress = results.progress
    if progress:
        _, first_indexed, _, _, _ = progress[0]
        _, last_indexed, total, status, _ = progress[-1]
        timeline = ", ".join(f"{t:.0f}s {done}/{all_}" for t, done, all_, _, _ in progress)
        print(
            f"indexing {last_indexed}/{total or args.files} files at the end of the window ({status}), "
            f"{(last_indexed - first_indexed) / seconds:.1f} files/s"
        )
        print(f"  timeline: {timeline}")
        print(f"  1-min load average during the window: max {max(p[4] for p in progress):.1f}")
    errors = results.errors + Counter(s.failure for s in chats if s.failure)
    print(f"errors   {', '.join(f'{key}: {n}' for key, n in sorted(errors.items())) or 'none'}")
    print(f"at the end: {load_average()}")
    server_errors = sum(n for key, n in errors.items() if _status(key) >= 500)
    followed = sum(1 for s in chats if s.run_id)
    for stream, reason in lost[:5]:
        print(f"  lost, run {stream.run_id}: {reason}")
    print(f"target zero 5xx: {'PASS' if not server_errors else 'FAIL'} ({server_errors})")
    print(f"target no lost events: {'PASS' if not lost else 'FAIL'} ({len(lost)} of {followed} streams)")
    return not server_errors and not lost


def _status(error_key: str) -> int:
    last = error_key.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=60, help="length of the load window")
    parser.add_argument("--files", type=int, default=2000, help="files in the folder indexed meanwhile")
    parser.add_argument("--words", type=int, default=600, help="words per generated file")
    parser.add_argument("--search-clients", type=int, default=8)
    parser.add_argument("--chat-clients", type=int, default=20)
    parser.add_argument("--agent-pool", choices=["prefork", "threads", "solo"], default=AGENT_POOL)
    parser.add_argument("--agent-concurrency", type=int, default=AGENT_CONCURRENCY)
    parser.add_argument("--redis-db", type=int, default=REDIS_DB, help="an empty Redis db for broker and events")
    args = parser.parse_args()
    corpus_root = Path(tempfile.mkdtemp(prefix="bench-load-"))
    try:
        write_notes(corpus_root / "small", files=SMALL_FILES, words=args.words, seed=1)
        write_notes(corpus_root / "big", files=args.files, words=args.words, seed=2)
        step(f"generated {SMALL_FILES} + {args.files} files; {load_average()}")
        with load_services(corpus_root, redis_db=args.redis_db) as database:
            step(f"scratch database {database} migrated, Redis db {args.redis_db}")
            token, folder_id = library_setup(corpus_root / "small")
            with running_stack(agent_pool=args.agent_pool, agent_concurrency=args.agent_concurrency) as url:
                results = asyncio.run(run_load(url, token, folder_id, corpus_root / "big", args))
                step("load over; stopping the servers")
            lost = lost_streams(results.chats)
            passed = report(results, lost, args)
    finally:
        shutil.rmtree(corpus_root, ignore_errors=True)
    step("done")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()

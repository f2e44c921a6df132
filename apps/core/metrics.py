"""Every Prometheus metric of the app, and the small functions the other apps record them with.

Multiprocess mode: each process (web workers, Celery's children, management commands) writes its
values to files under ``PROMETHEUS_MULTIPROC_DIR`` and ``GET /metrics`` (``metrics_view.py``) adds
them up. Recording is a write into a memory-mapped file: no query, no network, so it is safe on
every request. Names and labels are listed in README's Metrics section.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

from django.conf import settings

# prometheus_client chooses its value store once, when first imported, from the environment;
# reading the settings first puts PROMETHEUS_MULTIPROC_DIR there (config/settings.py).
_DIRECTORY = Path(settings.PROMETHEUS_MULTIPROC_DIR)
_DIRECTORY.mkdir(parents=True, exist_ok=True)

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server  # noqa: E402
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead  # noqa: E402

# Seconds, from a cache hit to a long agent run.
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_RUN_BUCKETS = (0.25, 0.5, 1, 2, 3, 5, 8, 10, 15, 20, 30, 60, 120, 300)
# From one file's row update to a 100,000-file folder's listing.
_STAGE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)

HTTP_REQUEST_SECONDS = Histogram(
    "folderchat_http_request_duration_seconds",
    "Time until the response starts (a stream's headers), by URL pattern, method and status.",
    ["route", "method", "status"],
    buckets=_LATENCY_BUCKETS,
)
SSE_STREAMS_OPEN = Gauge(
    "folderchat_sse_streams_open",
    "Event streams being served, by kind of channel (run, folder, inbox).",
    ["stream"],
    multiprocess_mode="livesum",
)
RUN_SECONDS = Histogram(
    "folderchat_run_duration_seconds",
    "From the question to the end of its run (queue wait included), by mode and final status.",
    ["mode", "status"],
    buckets=_RUN_BUCKETS,
)
RUN_FIRST_TEXT_SECONDS = Histogram(
    "folderchat_run_time_to_first_text_seconds",
    "From the question to the first answer text the asker saw, by mode.",
    ["mode"],
    buckets=_RUN_BUCKETS,
)
LLM_BREAKER_OPEN = Gauge(
    "folderchat_llm_breaker_open",
    "1 while a model service's circuit breaker is tripped in any live process (open, or waiting for a probe).",
    ["service"],
    multiprocess_mode="livemax",
)
FILES_INDEXED = Counter(
    "folderchat_files_indexed_total",
    "Files that finished indexing, by outcome (indexed, skipped, failed).",
    ["outcome"],
)
EMBEDDED_TEXTS = Counter(
    "folderchat_embedded_texts_total", "Chunk texts embedded while indexing, by provider.", ["provider"]
)
EMBEDDING_SECONDS = Histogram(
    "folderchat_embedding_seconds",
    "Time to embed one group of chunk texts while indexing, by provider.",
    ["provider"],
    buckets=_LATENCY_BUCKETS,
)
INDEXING_STAGE_SECONDS = Histogram(
    "folderchat_indexing_stage_seconds",
    "Time in one stage of indexing, by stage: a folder's list, reconcile and dispatch; a file's claim,"
    " prepare (read, parse, chunk), write (its chunks swapped) and progress (job, counters, event); the"
    " keyword statistics and each search-vector backfill batch. Embedding: folderchat_embedding_seconds.",
    ["stage"],
    buckets=_STAGE_BUCKETS,
)
SEARCH_SECONDS = Histogram(
    "folderchat_search_duration_seconds",
    "One search (question embedding and statement), by what it ranks (chunks, files) and mode.",
    ["kind", "mode"],
    buckets=_LATENCY_BUCKETS,
)
MODEL_TOKENS = Counter(
    "folderchat_model_tokens_total",
    "Model tokens by provider, model and kind (input, output, cached).",
    ["provider", "model", "kind"],
)
MODEL_COST = Counter("folderchat_model_cost_usd_total", "Model cost in US dollars.", ["provider", "model"])
EVALUATION_RUNS = Counter(
    "folderchat_evaluation_runs_total",
    "Evaluation runs that ended, by outcome: passed, regressed (a metric dropped past the set's margin), failed.",
    ["outcome"],
)

_USERINFO = re.compile(r"//[^/@]*@")
_LIVE_GAUGE_FILE = re.compile(r"gauge_live\w+?_(\d+)\.db")


def run_observe(*, mode: str, status: str, seconds: float, first_text_seconds: float | None) -> None:
    RUN_SECONDS.labels(mode=mode, status=status).observe(max(0.0, seconds))
    if first_text_seconds is not None:
        RUN_FIRST_TEXT_SECONDS.labels(mode=mode).observe(max(0.0, first_text_seconds))


def breaker_state_set(*, service: str, tripped: bool) -> None:
    # A base URL may carry credentials (https://user:key@host): never as a label.
    LLM_BREAKER_OPEN.labels(service=_USERINFO.sub("//", service)).set(1 if tripped else 0)


def file_outcome_observe(*, outcome: str) -> None:
    FILES_INDEXED.labels(outcome=outcome).inc()


def embedding_observe(*, provider: str, texts: int, seconds: float) -> None:
    EMBEDDED_TEXTS.labels(provider=provider).inc(texts)
    EMBEDDING_SECONDS.labels(provider=provider).observe(seconds)


@contextlib.contextmanager
def indexing_stage_timed(stage: str) -> Iterator[None]:
    """Time a stage of indexing (a block, or a function as its decorator), whether it returns or raises."""
    started = time.perf_counter()
    try:
        yield
    finally:
        INDEXING_STAGE_SECONDS.labels(stage=stage).observe(time.perf_counter() - started)


def model_usage_observe(
    *,
    provider: str,
    model: str,
    input_tokens: int,
    output_tokens: int,
    cached_tokens: int = 0,
    cost: float | Decimal | None = None,
) -> None:
    """One model call's usage; `cost` in US dollars, None when the price is unknown."""
    for kind, tokens in (("input", input_tokens), ("output", output_tokens), ("cached", cached_tokens)):
        if tokens > 0:
            MODEL_TOKENS.labels(provider=provider, model=model, kind=kind).inc(tokens)
    if cost:
        MODEL_COST.labels(provider=provider, model=model).inc(float(cost))


def evaluation_run_observe(*, outcome: str) -> None:
    EVALUATION_RUNS.labels(outcome=outcome).inc()


def worker_metrics_serve(*, port: int, address: str) -> None:
    """Serve this worker's metrics (every process writing to its multiprocess directory) at
    `http://address:port/metrics`, from a thread of the worker's main process: where a worker runs
    apart from the web (its own container or pod), its counters still reach Prometheus."""
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(_DIRECTORY))
    start_http_server(port, addr=address, registry=registry)


def metrics_process_ended(*, pid: int | None = None) -> None:
    """A process's live gauges (open streams, breakers) stop counting once it is gone."""
    mark_process_dead(pid if pid is not None else os.getpid(), str(_DIRECTORY))


def metrics_dead_processes_forget() -> None:
    """At a process's start: drop the live gauges of processes that died without saying so (killed,
    or a server without a child-exit hook). Their counters and histograms stay: a scrape keeps
    adding what they counted, so totals never go down while the stack runs."""
    pids = {int(match.group(1)) for name in os.listdir(_DIRECTORY) if (match := _LIVE_GAUGE_FILE.fullmatch(name))}
    for pid in pids - {os.getpid()}:
        if not _alive(pid):
            with contextlib.suppress(FileNotFoundError):  # another process starting forgot it first
                metrics_process_ended(pid=pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True

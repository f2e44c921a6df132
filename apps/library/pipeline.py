"""Keep the embedder busy while files are read, parsed, chunked and written.

``files_index`` prepares files one by one on its own thread (database, source, parser) and hands
each file's chunk texts to an ``EmbeddingPipeline``; once a group holds about two token-sized
batches (``EMBEDDING_BATCH_TOKENS``), it is embedded on one background thread. Meanwhile the
caller prepares the next files and writes (COPY) the files whose vectors are ready. ONNX Runtime
and the tokenizer release the GIL while they work, so the two threads overlap for real; the
database stays on the caller's thread (Django connections are per thread).
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from types import TracebackType
from typing import Generic, TypeVar

import numpy as np
from django.conf import settings
from django.db import DatabaseError

from apps.core.metrics import embedding_observe
from apps.embeddings.providers import DIMENSIONS, get_embedder
from apps.llm.types import Usage
from apps.llm.usage import usage_record
from apps.llm.usage_context import UsageContext, current_usage_context

logger = logging.getLogger(__name__)
Item = TypeVar("Item")
EmbeddingCall = tuple[str, str, int]  # provider, model, input tokens
# A remote embedder's calls made on the pipeline's thread, gathered there and recorded on the
# caller's, where the database is.
_gathered: contextvars.ContextVar[list[EmbeddingCall] | None] = contextvars.ContextVar("embedding_calls", default=None)


def embedding_usage_observe(*, provider: str, model: str, input_tokens: int) -> None:
    """A remote embedding call's tokens (``EMBEDDING_USAGE_OBSERVERS``). On a pipeline's thread they
    are gathered for its group, recorded for whom the pipeline's ``usage_of`` names (the folder's
    owner); elsewhere for whom the current usage context names (a run's question)."""
    gathered = _gathered.get()
    if gathered is not None:
        gathered.append((provider, model, input_tokens))
    else:
        embedding_usage_record(calls=[(provider, model, input_tokens)])


def embedding_usage_record(*, calls: Sequence[EmbeddingCall], context: UsageContext | None = None) -> None:
    context = context or current_usage_context()
    if context is None:
        return
    for provider, model, tokens in calls:
        try:
            usage_record(context=context, provider=provider, model=model, usage=Usage(input_tokens=tokens))
        except DatabaseError:
            # The vectors are already paid for and made: losing their record beats losing them.
            logger.exception("usage of a %s embedding call not recorded", provider)


def texts_embed(texts: Sequence[str]) -> np.ndarray:
    """All texts' vectors. The local model sizes its own batches by tokens; remote and test
    providers get EMBEDDING_BATCH_SIZE texts per call."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    embedder = get_embedder()
    started = time.perf_counter()
    if getattr(embedder, "batches_by_tokens", False):
        vectors = embedder.embed_documents(texts)
    else:
        batch = settings.EMBEDDING_BATCH_SIZE
        vectors = np.concatenate([embedder.embed_documents(texts[i : i + batch]) for i in range(0, len(texts), batch)])
    embedding_observe(provider=settings.EMBEDDING_PROVIDER, texts=len(texts), seconds=time.perf_counter() - started)
    return vectors


class EmbeddingPipeline(Generic[Item]):
    """Items (with their texts) in, (item, vectors or the embedding error, seconds) out, in order.

    ``seconds`` is the item's share of its group's embedding time (by its number of texts), so a
    caller can charge each file what it cost (``budget.py``)."""

    def __init__(
        self,
        *,
        embed: Callable[[Sequence[str]], np.ndarray] = texts_embed,
        group_tokens: int = 0,
        usage_of: Callable[[Item], UsageContext] | None = None,
    ) -> None:
        self._embed = embed
        self._usage_of = usage_of
        self._group_tokens = group_tokens or 2 * settings.EMBEDDING_BATCH_TOKENS
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        self._open: list[tuple[Item, list[str]]] = []
        self._open_tokens = 0
        self._sent: deque[
            tuple[list[tuple[Item, list[str]]], Future[tuple[np.ndarray, float, list[EmbeddingCall]]]]
        ] = deque()

    def __enter__(self) -> EmbeddingPipeline[Item]:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

    def add(self, item: Item, texts: list[str], *, tokens: int) -> None:
        self._open.append((item, texts))
        self._open_tokens += tokens
        if self._open_tokens >= self._group_tokens:
            self._send()

    def finished(self) -> Iterator[tuple[Item, np.ndarray | Exception, float]]:
        """The items whose group is embedded by now, without waiting."""
        while self._sent and self._sent[0][1].done():
            yield from self._results()

    def drain(self) -> Iterator[tuple[Item, np.ndarray | Exception, float]]:
        """Every remaining item, waiting for its group."""
        self._send()
        while self._sent:
            yield from self._results()

    def _send(self) -> None:
        if not self._open:
            return
        group = self._open
        texts = [text for _, item_texts in group for text in item_texts]
        self._sent.append((group, self._executor.submit(self._timed_embed, texts)))
        self._open, self._open_tokens = [], 0

    def _timed_embed(self, texts: list[str]) -> tuple[np.ndarray, float, list[EmbeddingCall]]:
        started = time.monotonic()
        calls: list[EmbeddingCall] = []
        token = _gathered.set(calls)
        try:
            vectors = self._embed(texts)
        finally:
            _gathered.reset(token)
        return vectors, time.monotonic() - started, calls

    def _results(self) -> Iterator[tuple[Item, np.ndarray | Exception, float]]:
        group, future = self._sent.popleft()
        # Waiting apart from reading the outcome: what interrupts the wait (Celery's soft time
        # limit arrives as an exception in this thread) must reach the caller, not the files.
        wait([future])
        error = future.exception()
        if isinstance(error, Exception):
            for item, _ in group:
                yield item, error, 0.0  # recorded on each file; the caller re-raises it
            return
        vectors, seconds, calls = future.result()
        if calls:
            first_item = group[0][0]
            embedding_usage_record(calls=calls, context=self._usage_of(first_item) if self._usage_of else None)
        offset = 0
        for item, texts in group:
            yield item, vectors[offset : offset + len(texts)], seconds * len(texts) / max(len(vectors), 1)
            offset += len(texts)

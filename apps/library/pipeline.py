"""Keep the embedder busy while files are read, parsed, chunked and written.

``files_index`` prepares files one by one on its own thread (database, source, parser) and hands
each file's chunk texts to an ``EmbeddingPipeline``; once a group holds about two token-sized
batches (``EMBEDDING_BATCH_TOKENS``), it is embedded on one background thread. Meanwhile the
caller prepares the next files and writes (COPY) the files whose vectors are ready. ONNX Runtime
and the tokenizer release the GIL while they work, so the two threads overlap for real; the
database stays on the caller's thread (Django connections are per thread).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from types import TracebackType
from typing import Generic, TypeVar

import numpy as np
from django.conf import settings

from apps.core.metrics import embedding_observe
from apps.embeddings.providers import DIMENSIONS, get_embedder

Item = TypeVar("Item")


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

    def __init__(self, *, embed: Callable[[Sequence[str]], np.ndarray] = texts_embed, group_tokens: int = 0) -> None:
        self._embed = embed
        self._group_tokens = group_tokens or 2 * settings.EMBEDDING_BATCH_TOKENS
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        self._open: list[tuple[Item, list[str]]] = []
        self._open_tokens = 0
        self._sent: deque[tuple[list[tuple[Item, list[str]]], Future[tuple[np.ndarray, float]]]] = deque()

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

    def _timed_embed(self, texts: list[str]) -> tuple[np.ndarray, float]:
        started = time.monotonic()
        vectors = self._embed(texts)
        return vectors, time.monotonic() - started

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
        vectors, seconds = future.result()
        offset = 0
        for item, texts in group:
            yield item, vectors[offset : offset + len(texts)], seconds * len(texts) / max(len(vectors), 1)
            offset += len(texts)

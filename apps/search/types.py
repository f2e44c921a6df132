"""Typed search inputs and results shared by the API, the chat and the agent tools."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class SearchMode(StrEnum):
    HYBRID = "hybrid"
    VECTOR = "vector"
    KEYWORD = "keyword"


@dataclass(frozen=True)
class SearchFilters:
    path_prefix: str | None = None
    mime_types: tuple[str, ...] = ()
    modified_after: dt.datetime | None = None
    modified_before: dt.datetime | None = None


@dataclass(frozen=True)
class SearchHit:
    chunk_id: int
    file_id: int
    file_name: str
    path: str
    text: str
    location: dict[str, Any] = field(default_factory=dict)
    vector_rank: int | None = None
    keyword_rank: int | None = None
    score: float = 0.0
    # Cosine distance to the question and the BM25 score, when that side found the chunk.
    distance: float | None = None
    keyword_score: float | None = None


@dataclass(frozen=True)
class QuestionTerm:
    """A lexeme of a question, as the keyword search reads it, and whether given passages hold it."""

    word: str  # the question's word it came from, as typed
    lexeme: str
    idf: float  # over the folder's chunks; a lexeme the folder never holds weighs the most
    held: bool


@dataclass(frozen=True)
class FileHit:
    file_id: int
    file_name: str
    path: str
    mime_type: str
    modified_time: dt.datetime | None
    vector_rank: int | None = None
    keyword_rank: int | None = None
    score: float = 0.0

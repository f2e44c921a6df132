"""Hybrid search over a folder's chunks and files: one parameterized statement per search.

Callers (the API, the chat, the agent tools) must already have checked that the user may read
the folder; these selectors scope every row to ``folder_id`` and nothing else.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils.translation import gettext as _
from pgvector import Vector

from apps.core.api import ApplicationError
from apps.core.metrics import SEARCH_SECONDS
from apps.embeddings.providers import get_embedder
from apps.search import planning
from apps.search.file_statements import file_statement
from apps.search.statements import KeywordMethod, StatementShape, VectorMethod, chunk_statement, filter_params
from apps.search.types import FileHit, QuestionTerm, SearchFilters, SearchHit, SearchMode

K_MAX = 100
# Rows each side hands to the fusion in hybrid mode (RRF rewards rows both sides rank fairly
# well, so the lists must go deeper than k).
FUSION_DEPTH = 50
# In a folder large enough for the GIN index: keyword candidates BM25 ranks per search (at least
# this, else 10 per row wanted), which is also the document-frequency budget of the (rarest)
# lexemes that select them, so ranking cost stays bounded however many chunks match. A scanned
# folder (planning.KEYWORD_SCAN_MAX_ROWS) has no budget: every lexeme selects. The budget costs
# recall where short questions hold only common words, and a larger budget costs time in the
# largest folders. At 500 / 1000 / 2000: Debian's man pages (8,164 chunks, summary lines as
# questions) keyword nDCG@10 0.620 / 0.628 / 0.628 against bm25s 0.635 (bench/search/search_quality.py);
# a folder of 200k among 1M chunks, hybrid p95 13.0 / 25.8 / 40.9 ms (bench/search/search_speed.py
# --keyword-cap N). 1000 keeps the keyword side within 0.01 of bm25s and the p95 well under 50 ms.
KEYWORD_CANDIDATE_CAP = 1000
BM25_K1 = 1.2
BM25_B = 0.75
# Question embeddings kept per process, by (provider, text).
QUERY_EMBEDDING_CACHE_SIZE = 512
_MODES = frozenset(mode.value for mode in SearchMode)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def _timed(kind: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Each search's duration (folderchat_search_duration_seconds), by `kind` and its mode."""

    def decorate(search: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(search)
        def timed(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            mode = str(kwargs.get("mode", SearchMode.HYBRID))
            with SEARCH_SECONDS.labels(kind=kind, mode=mode if mode in _MODES else "other").time():
                return search(*args, **kwargs)

        return timed

    return decorate


@_timed("chunks")
def chunk_search(
    *,
    folder_id: int,
    query: str,
    k: int = 10,
    mode: SearchMode = SearchMode.HYBRID,
    filters: SearchFilters | None = None,
    rrf_k: int | None = None,
    weights: tuple[float, float] = (1.0, 1.0),
    query_vector: np.ndarray | None = None,
) -> list[SearchHit]:
    """The folder's best chunks for ``query``.

    ``weights`` scale the (vector, keyword) RRF terms; ``query_vector`` is the question's embedding
    when the caller already has it.
    """
    question = _question(query=query, k=k, mode=mode, filters=filters, query_vector=query_vector)
    if question is None:
        return []
    folder_rows = planning.folder_chunk_count(folder_id=folder_id)
    plan = planning.search_plan(folder_id=folder_id, folder_rows=folder_rows, k=k, depth=question.depth)
    # Without a question vector there is no vector side, whatever its plan.
    vector_plan = plan.vector if question.embedding is not None else planning.VectorPlan(VectorMethod.EXACT)
    shape = question.shape(
        vector_method=vector_plan.method,
        keyword_method=plan.keyword.method,
        keyword_partition=plan.keyword_partition if question.keyword else None,
    )
    params = _params(
        folder_id=folder_id,
        question=question,
        k=k,
        posting_scale=plan.keyword.posting_scale,
        rrf_k=rrf_k,
        weights=weights,
        row_budget=plan.keyword.row_budget,
    )
    rows = _run(chunk_statement(shape), params, plan=vector_plan)
    return [
        SearchHit(
            chunk_id=row[0],
            file_id=row[1],
            file_name=row[2],
            path=row[3],
            text=row[4],
            location=_json(row[5]),
            vector_rank=row[6],
            keyword_rank=row[7],
            score=float(row[8]),
            distance=_finite(row[9]),
            keyword_score=row[10],
        )
        for row in rows
    ]


@_timed("files")
def file_search(
    *,
    folder_id: int,
    query: str,
    k: int = 10,
    mode: SearchMode = SearchMode.HYBRID,
    filters: SearchFilters | None = None,
    rrf_k: int | None = None,
    weights: tuple[float, float] = (1.0, 1.0),
    query_vector: np.ndarray | None = None,
) -> list[FileHit]:
    """The folder's files best matching ``query`` by name and preview, and by file embedding."""
    question = _question(query=query, k=k, mode=mode, filters=filters, query_vector=query_vector)
    if question is None:
        return []
    # Files are few per folder: exact distances, and the file GIN index's short posting lists.
    params = _params(
        folder_id=folder_id,
        question=question,
        k=k,
        posting_scale=0.0,
        rrf_k=rrf_k,
        weights=weights,
        row_budget=True,
    )
    rows = _run(file_statement(question.shape()), params, plan=planning.VectorPlan(VectorMethod.EXACT))
    return [
        FileHit(
            file_id=row[0],
            file_name=row[1],
            path=row[2],
            mime_type=row[3],
            modified_time=row[4],
            vector_rank=row[5],
            keyword_rank=row[6],
            score=float(row[7]),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class _Question:
    text: str
    filters: SearchFilters
    keyword: bool
    # pgvector text; None in keyword mode, or when the question's vector has no direction.
    embedding: str | None
    # Rows each side hands to the fusion.
    depth: int

    def shape(
        self,
        *,
        vector_method: VectorMethod = VectorMethod.EXACT,
        keyword_method: KeywordMethod = KeywordMethod.INDEX,
        keyword_partition: str | None = None,
    ) -> StatementShape:
        return StatementShape(
            vector=self.embedding is not None,
            keyword=self.keyword,
            filters=self.filters,
            vector_method=vector_method,
            keyword_method=keyword_method,
            keyword_partition=keyword_partition,
        )


def _question(
    *, query: str, k: int, mode: SearchMode | str, filters: SearchFilters | None, query_vector: np.ndarray | None
) -> _Question | None:
    """Validated inputs, or None when nothing can match (blank question, unmatchable filter)."""
    if len(query) > settings.SEARCH_MAX_QUERY_CHARS:
        raise ApplicationError(
            _("The query is longer than %(limit)s characters.") % {"limit": settings.SEARCH_MAX_QUERY_CHARS}
        )
    if not 1 <= k <= K_MAX:
        raise ApplicationError(_("k must be between 1 and %(max)s.") % {"max": K_MAX})
    try:
        mode = SearchMode(mode)
    except ValueError:
        raise ApplicationError(_("Unknown search mode %(mode)r.") % {"mode": mode}) from None
    # PostgreSQL text cannot hold NUL; in a question it is only noise.
    text = query.replace("\x00", " ").strip()
    filters = filters or SearchFilters()
    # No stored path or MIME type contains NUL, so such a filter matches nothing.
    mime_types = tuple(m for m in filters.mime_types if "\x00" not in m)
    if not text or "\x00" in (filters.path_prefix or "") or (filters.mime_types and not mime_types):
        return None
    return _Question(
        text=text,
        filters=SearchFilters(
            path_prefix=filters.path_prefix or None,
            mime_types=mime_types,
            modified_after=filters.modified_after,
            modified_before=filters.modified_before,
        ),
        keyword=mode is not SearchMode.VECTOR,
        embedding=_embedding(text, query_vector) if mode is not SearchMode.KEYWORD else None,
        depth=k if mode is not SearchMode.HYBRID else max(k, FUSION_DEPTH),
    )


def _embedding(text: str, query_vector: np.ndarray | None) -> str | None:
    """The question's vector as pgvector text; None when it has no direction (no features)."""
    if query_vector is None:
        return _query_embedding(settings.EMBEDDING_PROVIDER, text)
    return _vector_text(np.asarray(query_vector, dtype=np.float32))


# An agent searches the same question several times in a run (chunks, files, again after reading),
# and embedding it is most of a search's time (bench/search/search_latency.py): each provider embeds a
# text once per process. Failures are not cached (lru_cache keeps only returned values).
@functools.lru_cache(maxsize=QUERY_EMBEDDING_CACHE_SIZE)
def _query_embedding(provider: str, text: str) -> str | None:
    return _vector_text(get_embedder(provider).embed_query(text))


def _vector_text(vector: np.ndarray) -> str | None:
    return Vector(vector).to_text() if np.any(vector) else None


def _params(
    *,
    folder_id: int,
    question: _Question,
    k: int,
    posting_scale: float,
    rrf_k: int | None,
    weights: tuple[float, float],
    row_budget: bool,
) -> dict[str, Any]:
    """``row_budget``: the lexemes that select keyword candidates stay within a budget of rows,
    which also caps the candidates; without it every lexeme selects, as many as a scanned folder has rows."""
    depth = question.depth
    keyword_rows = max(KEYWORD_CANDIDATE_CAP, 10 * depth)
    return {
        "folder_id": folder_id,
        "query": question.text,
        "embedding": question.embedding,
        "k": k,
        "vector_depth": depth,
        "vector_minimum": k,
        "keyword_depth": depth,
        "keyword_cap": keyword_rows if row_budget else max(planning.KEYWORD_SCAN_MAX_ROWS, 10 * depth),
        "term_budget": keyword_rows if row_budget else None,
        "posting_scale": posting_scale,
        "posting_budget": planning.KEYWORD_POSTING_BUDGET,
        "bm25_k1": BM25_K1,
        "bm25_b": BM25_B,
        "rrf_k": settings.SEARCH_RRF_K if rrf_k is None else rrf_k,
        "vector_weight": float(weights[0]),
        "keyword_weight": float(weights[1]),
        **filter_params(question.filters),
    }


def _run(sql: str, params: dict[str, Any], *, plan: planning.VectorPlan) -> Sequence[tuple[Any, ...]]:
    # SET LOCAL lasts until the end of the transaction: ours, or the caller's when nested.
    with transaction.atomic(), connection.cursor() as cursor:
        # JIT compiling costs more than these millisecond statements ever run.
        cursor.execute(
            "SELECT set_config('jit', 'off', true), set_config('hnsw.ef_search', %s, true)", [str(plan.ef_search)]
        )
        if plan.method is VectorMethod.ITERATIVE:
            cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
        cursor.execute(sql, params)
        return cursor.fetchall()


_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")
# The question's words, each through the folder's text search configuration (the keyword search's
# lexemes), weighed by the folder's statistics like BM25's IDF but with an unknown lexeme at df 0:
# a word the folder never holds is the most specific thing a question can ask about.
_QUESTION_TERMS = """
WITH words AS (
    SELECT w.word, w.ord, t.lexeme
    FROM unnest(%(words)s::text[]) WITH ORDINALITY AS w(word, ord)
    CROSS JOIN LATERAL unnest(to_tsvector(library_folder_regconfig(%(folder_id)s), w.word)) AS t
),
held AS (
    SELECT DISTINCT unnest(tsvector_to_array(to_tsvector(library_folder_regconfig(%(folder_id)s), p))) AS lexeme
    FROM unnest(%(passages)s::text[]) AS p
),
corpus AS (
    SELECT coalesce((SELECT chunk_count FROM search_foldertermstats WHERE folder_id = %(folder_id)s),
                    (SELECT count(*) FROM library_chunk WHERE folder_id = %(folder_id)s))::float8 AS n
)
SELECT word, lexeme, idf, held FROM (
    SELECT DISTINCT ON (w.lexeme) w.word, w.lexeme, w.ord,
           ln((c.n + 1) / (coalesce(l.document_count, 0) + 0.5)) AS idf,
           EXISTS (SELECT 1 FROM held h WHERE h.lexeme = w.lexeme) AS held
    FROM words w
    CROSS JOIN corpus c
    LEFT JOIN LATERAL (  -- an index probe a word, as statements.TERMS does it
        SELECT l.document_count
        FROM search_folderlexeme l
        WHERE l.folder_id = %(folder_id)s AND l.lexeme = w.lexeme
        LIMIT 1
    ) l ON true
    ORDER BY w.lexeme, w.ord
) AS terms
ORDER BY ord
"""


def question_terms(*, folder_id: int, question: str, passages: Sequence[str]) -> list[QuestionTerm]:
    """The question's lexemes under the folder's language, in the question's order, each with its
    IDF in the folder and whether any of `passages` holds it."""
    # Words as typed, less the punctuation around them ("dentist?"), to be named back to the user.
    words = [
        word for word in (_EDGE_PUNCTUATION.sub("", word) for word in question.replace("\x00", " ").split()) if word
    ]
    if not words:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            _QUESTION_TERMS,
            {"folder_id": folder_id, "words": words, "passages": [text.replace("\x00", " ") for text in passages]},
        )
        rows = cursor.fetchall()
    return [QuestionTerm(word=row[0], lexeme=row[1], idf=float(row[2]), held=bool(row[3])) for row in rows]


def _finite(value: float | None) -> float | None:
    # A stored zero vector has no cosine distance (NaN), which JSON cannot carry either.
    return value if value is None or math.isfinite(value) else None


def _json(value: Any) -> dict[str, Any]:
    loaded = json.loads(value) if isinstance(value, str) else value
    return loaded if isinstance(loaded, dict) else {}

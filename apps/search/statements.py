r"""The SQL of a search: one statement, assembled from fixed fragments, every value a bound parameter.

Only fragments chosen by the caller's shape (mode, access paths, which filters are set) are
concatenated; user input reaches PostgreSQL only through ``%(name)s`` parameters. The keyword
tsquery is built inside PostgreSQL from the lexemes ``to_tsvector`` finds in the question, each
quoted as a literal lexeme, so tsquery operators typed by the user (``& | ! <-> :* ( )``) are
never parsed as operators.

Shape of the chunk statement (DESIGN §6):

    query_terms -> corpus -> weighted_terms -> keyword_query      lexemes, IDF, an OR tsquery
    keyword_candidates (folder scan or GIN) -> keyword_terms      <= cap rows, their question lexemes
    chunk_bm25, keyword_files -> file_bm25 -> keyword_scored      each chunk's BM25 plus its file's
    keyword_ranked                                                the top rows, ranked
    vector_* (HNSW or exact, own ORDER BY .. LIMIT) -> vector_ranked
    fused: FULL OUTER JOIN on chunk id, plain RRF                 then chunks and files joined once
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from apps.library.vector_index import HALFVEC
from apps.search.types import SearchFilters


class VectorMethod(StrEnum):
    EXACT = "exact"  # distance to every row of the folder, read through the folder btree
    HNSW = "hnsw"  # filtered HNSW with an over-fetching ef_search; exact when it comes up short
    ITERATIVE = "iterative"  # pgvector >= 0.8: HNSW iterative scan keeps going until LIMIT is met


class KeywordMethod(StrEnum):
    SCAN = "scan"  # match every row of the folder, read through the folder btree
    INDEX = "index"  # GIN, whose posting lists span every folder, intersected with the folder btree
    INDEX_FILTER = "index_filter"  # GIN alone, the folder checked on each matching row


@dataclass(frozen=True)
class StatementShape:
    vector: bool
    keyword: bool
    filters: SearchFilters
    vector_method: VectorMethod = VectorMethod.EXACT
    keyword_method: KeywordMethod = KeywordMethod.INDEX
    # INDEX_FILTER reads the folder's partition by name (planning.folder_partition): its folder
    # condition, which must not match the folder btree, cannot prune the partitioned table.
    keyword_partition: str | None = None


def filter_params(filters: SearchFilters) -> dict[str, object]:
    return {
        "path_prefix": filters.path_prefix,
        "mime_types": list(filters.mime_types),
        "modified_after": filters.modified_after,
        "modified_before": filters.modified_before,
    }


# Filters are file attributes; each set filter adds its fixed condition on ``library_file ff``.
_FILE_CONDITIONS = {
    "path_prefix": " AND starts_with(ff.path, %(path_prefix)s)",
    "mime_types": " AND ff.mime_type = ANY(%(mime_types)s::text[])",
    "modified_after": " AND ff.modified_time >= %(modified_after)s",
    "modified_before": " AND ff.modified_time < %(modified_before)s",
}
_CHUNK_FILE_FILTER = (
    " AND c.file_id IN (SELECT ff.id FROM library_file ff WHERE ff.folder_id = %(folder_id)s{conditions})"
)


def file_conditions(filters: SearchFilters) -> str:
    return "".join(condition for name, condition in _FILE_CONDITIONS.items() if getattr(filters, name))


def _chunk_file_filter(filters: SearchFilters) -> str:
    conditions = file_conditions(filters)
    return _CHUNK_FILE_FILTER.format(conditions=conditions) if conditions else ""


# Lexemes of the question, under the folder's language (library/0011), with their count in it (qtf)
# and their document frequency in the folder's chunks (df) and files (file_df).
# Each lexeme is one index probe: LIMIT 1 keeps the planner from flattening the lookup into a join,
# which for a folder of many lexemes it answered by hashing all of them: 24 of a 36 ms search in a
# folder of 200k chunks and 57k lexemes (bench/search/search_speed.py, 1M chunks).
# A lexeme the statistics do not know (stale or never refreshed) counts as rare (df 1): it still
# matches and ranks. Statistics counted before files were (search/0004) count its chunks as files.
# to_tsvector keeps one entry a lexeme, its positions say how often it occurs: a long request
# repeats the words it is about, and BM25 counts each occurrence (as bm25s does; nDCG@10 CACM
# 0.448 -> 0.488, Cranfield 0.357 -> 0.358, bench/search/search_quality.py).
TERMS = r"""
query_terms AS MATERIALIZED (
    SELECT t.lexeme, cardinality(t.positions)::float8 AS qtf,
           coalesce(l.document_count, 1) AS df, coalesce(l.file_count, l.document_count, 1) AS file_df
    FROM unnest(to_tsvector(library_folder_regconfig(%(folder_id)s), %(query)s)) AS t
    LEFT JOIN LATERAL (
        SELECT l.document_count, l.file_count
        FROM search_folderlexeme l
        WHERE l.folder_id = %(folder_id)s AND l.lexeme = t.lexeme
        LIMIT 1
    ) l ON true
),
corpus AS MATERIALIZED (
    SELECT coalesce(s.chunk_count,
                    (SELECT count(*) FROM library_chunk WHERE folder_id = %(folder_id)s))::float8 AS n,
           nullif(s.total_tokens, 0)::float8 / nullif(s.chunk_count, 0) AS avgdl,
           coalesce(s.file_count,
                    (SELECT count(*) FROM library_file WHERE folder_id = %(folder_id)s AND chunk_count > 0))::float8
             AS files,
           nullif(s.total_tokens, 0)::float8 / nullif(s.file_count, 0) AS file_avgdl
    FROM (VALUES (1)) AS one
    LEFT JOIN search_foldertermstats s ON s.folder_id = %(folder_id)s
),
weighted_terms AS MATERIALIZED (
    SELECT q.lexeme, q.qtf,
           ln((c.n + 1) / (least(q.df, c.n) + 0.5)) AS idf,
           ln((c.files + 1) / (least(q.file_df, c.files) + 0.5)) AS file_idf,
           row_number() OVER (ORDER BY q.df, q.lexeme) AS rarity,
           sum(q.df) OVER (ORDER BY q.df, q.lexeme) AS cumulative_df
    FROM query_terms q CROSS JOIN corpus c
),
-- Candidates come from the rarest lexemes (the rarest always) while their document frequencies
-- stay within two budgets: rows matched in the folder (none when term_budget is NULL: a scanned
-- folder reads every row anyway), and postings the GIN index reads table-wide (estimated from the
-- folder's share of the table). Cost stays bounded however common the other words are; chunks
-- holding only commoner words are not ranked (selectors.KEYWORD_CANDIDATE_CAP says what it costs).
keyword_query AS MATERIALIZED (
    SELECT string_agg('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''' {prefix}, ' | ')::tsquery
           AS tsq
    FROM weighted_terms
    WHERE rarity = 1
       OR ((cumulative_df <= %(term_budget)s OR %(term_budget)s::float8 IS NULL)
           AND cumulative_df * %(posting_scale)s::float8 <= %(posting_budget)s)
)"""

# BM25's document length: the chunk's tokens (its words, stopwords and repeats included), as
# the folder's average (search_foldertermstats.total_tokens) counts them. Distinct lexemes
# (length(tsvector)) understate long chunks that repeat their words. nDCG@10 CACM 0.488 -> 0.500,
# Cranfield 0.358 -> 0.354: both within 0.01 of bm25s only this way.
_LENGTH = "greatest(c.token_count, 1)::float8"

_KEYWORD_INDEX = """
keyword_candidates AS MATERIALIZED (
    SELECT c.id, c.file_id, c.search_vector, {length} AS length
    FROM {table} c
    WHERE {folder_condition}
      AND c.search_vector @@ (SELECT tsq FROM keyword_query){file_filter}
    LIMIT %(keyword_cap)s
),"""
_FOLDER = "c.folder_id = %(folder_id)s"
# "+ 0" keeps the planner from using the folder btree: for a folder holding a large share of its
# partition, a bitmap of all its rows costs more than checking the few rows the GIN index matches.
_FOLDER_NOT_INDEXED = "c.folder_id + 0 = %(folder_id)s"

# OFFSET 0 keeps the match outside the subquery, so the planner cannot answer it with the GIN
# index (whose posting lists span every folder): a small folder is cheaper to read whole.
_KEYWORD_SCAN = """
keyword_candidates AS MATERIALIZED (
    SELECT c.id, c.file_id, c.search_vector, {length} AS length
    FROM (
        SELECT c.id, c.file_id, c.search_vector, c.token_count
        FROM library_chunk c
        WHERE c.folder_id = %(folder_id)s{file_filter}
        OFFSET 0
    ) c
    WHERE c.search_vector @@ (SELECT tsq FROM keyword_query)
    LIMIT %(keyword_cap)s
),"""

# The question's lexemes in each keyword candidate, with their count there (tf): the positions of
# those lexemes, cut out of each tsvector by marking them weight A and keeping only A.
_KEYWORD_TERMS = r"""
keyword_terms AS MATERIALIZED (
    SELECT r.id, r.file_id, r.length, w.lexeme, w.qtf, w.idf, w.file_idf, cardinality(u.positions)::float8 AS tf
    FROM keyword_candidates r
    CROSS JOIN LATERAL unnest(ts_filter(
        setweight(r.search_vector, 'A', (SELECT array_agg(lexeme) FROM weighted_terms)), '{a}'
    )) AS u
    JOIN weighted_terms w ON w.lexeme = u.lexeme
),"""

# BM25 (k1, b) of a text of length {length} (in average lengths {average}) holding a lexeme tf times.
_BM25_TERM = (
    "{idf} * {tf} * (%(bm25_k1)s::float8 + 1)"
    " / ({tf} + %(bm25_k1)s::float8 * (1 - %(bm25_b)s::float8 + %(bm25_b)s::float8 * {length} / {average}))"
)

# Each candidate chunk's BM25, and its file's, as if the file were one document: its term
# frequencies are those of its candidate chunks added up, its length its tokens, its IDF from the
# files holding the lexeme. A chunk scores both, each scaled by the best of its kind (equal
# weights, not tuned): a passage about the question in a file about it comes first (passage and
# document evidence, as in Callan, SIGIR 1994). The file's other matching chunks rank high too,
# which is what lets fusion agree on a file whose best chunks differ between the two sides:
# giving the file's score to its best chunk alone kept keyword nDCG@10 and cost the hybrid 0.017
# on King James, 0.025 on the man pages. nDCG@10 against the chunk's BM25 alone
# (bench/search/search_quality.py): King James Bible, a chapter of four chunks a document, 0.793 ->
# 0.809 (bm25s over whole chapters 0.819); Debian's man pages 0.630 -> 0.665; Cranfield, CACM
# and CISI (about a chunk a document) +0.003 to +0.007.
_KEYWORD_SCORES = """
chunk_bm25 AS MATERIALIZED (
    SELECT t.id, t.file_id, sum(t.qtf * {chunk_term}) AS score
    FROM keyword_terms t
    CROSS JOIN (SELECT coalesce(avgdl, (SELECT avg(length) FROM keyword_candidates), 1) AS avgdl FROM corpus) a
    GROUP BY t.id, t.file_id
),
keyword_files AS MATERIALIZED (
    SELECT f.id AS file_id, greatest(f.token_count, 1)::float8 AS length
    FROM library_file f
    WHERE f.id IN (SELECT file_id FROM keyword_terms)
),
file_bm25 AS MATERIALIZED (
    SELECT t.file_id, sum(t.qtf * {file_term}) AS score
    FROM (
        SELECT file_id, qtf, file_idf AS idf, sum(tf) AS tf
        FROM keyword_terms
        GROUP BY file_id, lexeme, qtf, file_idf
    ) t
    JOIN keyword_files f ON f.file_id = t.file_id
    CROSS JOIN (SELECT coalesce(file_avgdl, (SELECT avg(length) FROM keyword_files), 1) AS avgdl FROM corpus) a
    GROUP BY t.file_id
),
keyword_scored AS (
    SELECT c.id, c.file_id,
           c.score / (SELECT max(score) FROM chunk_bm25) + f.score / (SELECT max(score) FROM file_bm25) AS score
    FROM chunk_bm25 c
    JOIN file_bm25 f ON f.file_id = c.file_id
    ORDER BY score DESC, c.id
    LIMIT %(keyword_depth)s
),"""

_KEYWORD_RANKED = """
keyword_ranked AS (
    SELECT id, file_id, score, row_number() OVER (ORDER BY score DESC, id) AS rank
    FROM keyword_scored
)"""

_NO_KEYWORD = """
keyword_ranked AS (
    SELECT NULL::bigint AS id, NULL::bigint AS file_id, NULL::float8 AS score, NULL::bigint AS rank
    WHERE false
)"""

# The HNSW leg orders and limits in its own subquery, which is what lets the index serve it. The
# folder condition prunes the scan to the folder's partition, whose own HNSW graph it reads
# (apps/library/vector_index.py). That graph is over the embedding as halfvec, so the leg orders by
# the index's own expression; it returns the exact vector distance, which vector_ranked ranks by
# (one more distance for each of the few rows found): the distances reported, and their order, are
# those an exact scan gives, not halfvec's (about 3 significant digits a component).
_VECTOR_INDEXED = f"""
vector_indexed AS MATERIALIZED (
    SELECT c.id, c.file_id, c.embedding <=> %(embedding)s::vector AS distance
    FROM library_chunk c
    WHERE c.folder_id = %(folder_id)s{{file_filter}}
    ORDER BY c.embedding::{HALFVEC} <=> %(embedding)s::{HALFVEC}
    LIMIT %(vector_depth)s
),"""  # noqa: S608 - the cast's type is a constant

# Exact distances over the folder's rows. Materialising them first keeps the planner from
# answering ORDER BY .. LIMIT with the (post-filtering) HNSW index. {only_if} makes it the
# fallback of the HNSW leg: a one-time filter skips it unless HNSW found fewer than k rows.
_VECTOR_EXACT = """
vector_exact AS MATERIALIZED (
    SELECT c.id, c.file_id, c.embedding <=> %(embedding)s::vector AS distance
    FROM library_chunk c
    WHERE c.folder_id = %(folder_id)s AND c.embedding IS NOT NULL{file_filter}{only_if}
),"""

_VECTOR_RANKED = """
vector_ranked AS (
    SELECT id, file_id, distance, row_number() OVER (ORDER BY distance, id) AS rank
    FROM ({source}) AS v
)"""

_NO_VECTOR = """
vector_ranked AS (
    SELECT NULL::bigint AS id, NULL::bigint AS file_id, NULL::float8 AS distance, NULL::bigint AS rank WHERE false
)"""

_ONLY_IF_SHORT = " AND (SELECT count(*) FROM vector_indexed) < %(vector_minimum)s"
_EXACT_TOP = "(SELECT * FROM vector_exact ORDER BY distance, id LIMIT %(vector_depth)s)"
_INDEXED_OR_EXACT_TOP = """
    SELECT * FROM vector_indexed WHERE (SELECT count(*) FROM vector_indexed) >= %(vector_minimum)s
    UNION ALL
    (SELECT * FROM vector_exact ORDER BY distance, id LIMIT %(vector_depth)s)"""

# Plain RRF: a side that did not find the row adds nothing. Nothing else votes: a phrase vote (rows
# holding the whole question) and a floor on keyword matches (0.1 of the best score) moved no
# collection of bench/search/search_quality.py by more than 0.002 nDCG@10, and a vote for the
# question's wording is what questions phrased unlike their answer cannot earn (issue 42).
_FUSED = """
fused AS (
    SELECT coalesce(v.id, k.id) AS chunk_id,
           coalesce(v.file_id, k.file_id) AS file_id,
           v.rank AS vector_rank, k.rank AS keyword_rank, v.distance, k.score AS keyword_score,
           coalesce(%(vector_weight)s::float8 / (%(rrf_k)s + v.rank), 0)
             + coalesce(%(keyword_weight)s::float8 / (%(rrf_k)s + k.rank), 0) AS score
    FROM vector_ranked v
    FULL OUTER JOIN keyword_ranked k ON k.id = v.id
    ORDER BY score DESC, chunk_id
    LIMIT %(k)s
)"""

_CHUNK_SELECT = """
SELECT fu.chunk_id, fu.file_id, f.name, f.path, c.text, c.location,
       fu.vector_rank, fu.keyword_rank, fu.score, fu.distance, fu.keyword_score
FROM fused fu
JOIN library_chunk c ON c.folder_id = %(folder_id)s AND c.id = fu.chunk_id
JOIN library_file f ON f.id = fu.file_id
ORDER BY fu.score DESC, fu.chunk_id"""


def _vector_ctes(shape: StatementShape) -> str:
    if not shape.vector:
        return _NO_VECTOR
    file_filter = _chunk_file_filter(shape.filters)
    if shape.vector_method is VectorMethod.EXACT:
        return _VECTOR_EXACT.format(file_filter=file_filter, only_if="") + _VECTOR_RANKED.format(source=_EXACT_TOP)
    indexed = _VECTOR_INDEXED.format(file_filter=file_filter)
    exact = _VECTOR_EXACT.format(file_filter=file_filter, only_if=_ONLY_IF_SHORT)
    return indexed + exact + _VECTOR_RANKED.format(source=_INDEXED_OR_EXACT_TOP)


def _keyword_candidates(shape: StatementShape) -> str:
    file_filter = _chunk_file_filter(shape.filters)
    if shape.keyword_method is KeywordMethod.SCAN:
        return _KEYWORD_SCAN.format(file_filter=file_filter, length=_LENGTH)
    if shape.keyword_method is KeywordMethod.INDEX_FILTER:
        table = _quoted(shape.keyword_partition or "library_chunk")
        folder = _FOLDER_NOT_INDEXED
    else:
        table, folder = "library_chunk", _FOLDER
    return _KEYWORD_INDEX.format(table=table, folder_condition=folder, file_filter=file_filter, length=_LENGTH)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


_CHUNK_TERM = _BM25_TERM.format(idf="t.idf", tf="t.tf", length="t.length", average="a.avgdl")
_FILE_TERM = _BM25_TERM.format(idf="t.idf", tf="t.tf", length="f.length", average="a.avgdl")


def chunk_statement(shape: StatementShape) -> str:
    ctes = []
    if shape.keyword:
        ctes.append(TERMS.format(prefix="") + ",")
        ctes.append(_keyword_candidates(shape))
        ctes.append(_KEYWORD_TERMS)
        ctes.append(_KEYWORD_SCORES.format(chunk_term=_CHUNK_TERM, file_term=_FILE_TERM))
        ctes.append(_KEYWORD_RANKED + ",")
    else:
        ctes.append(_NO_KEYWORD + ",")
    ctes.append(_vector_ctes(shape) + ",")
    ctes.append(_FUSED)
    return "WITH" + "".join(ctes) + _CHUNK_SELECT

"""The SQL of a file search (by name, preview and file embedding), built like the chunk statement.

Files are few per folder next to chunks: exact vector distances suffice, no index plan is needed.
"""

from __future__ import annotations

from apps.search.statements import TERMS, StatementShape, file_conditions

# The name (weight A: the whole name and its parts, library/0007) and preview (weight B) tsvector;
# the question's lexemes match as prefixes and a term counts double in the name.
_FILE_KEYWORD = """
file_keyword AS (
    SELECT s.id, s.score, row_number() OVER (ORDER BY s.score DESC, s.id) AS rank
    FROM (
        SELECT f.id,
               sum(w.idf * ((ts_filter(f.search_vector, '{{a}}') @@ w.tsq)::int * 2
                            + (ts_filter(f.search_vector, '{{b}}') @@ w.tsq)::int)) AS score
        FROM (
            SELECT ff.id, ff.search_vector
            FROM library_file ff
            WHERE ff.folder_id = %(folder_id)s
              AND ff.search_vector @@ (SELECT tsq FROM keyword_query){file_filter}
            LIMIT %(keyword_cap)s
        ) f
        CROSS JOIN (
            SELECT idf, ('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || ''':*')::tsquery AS tsq
            FROM weighted_terms
        ) w
        GROUP BY f.id
        ORDER BY score DESC, f.id
        LIMIT %(keyword_depth)s
    ) s
)"""

_FILE_NO_KEYWORD = """
file_keyword AS (SELECT NULL::bigint AS id, NULL::float8 AS score, NULL::bigint AS rank WHERE false)"""

_FILE_VECTOR = """
file_distances AS MATERIALIZED (
    SELECT ff.id, ff.embedding <=> %(embedding)s::vector AS distance
    FROM library_file ff
    WHERE ff.folder_id = %(folder_id)s AND ff.embedding IS NOT NULL{file_filter}
),
file_vector AS (
    SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank
    FROM (SELECT * FROM file_distances ORDER BY distance, id LIMIT %(vector_depth)s) d
)"""

_FILE_NO_VECTOR = """
file_vector AS (SELECT NULL::bigint AS id, NULL::float8 AS distance, NULL::bigint AS rank WHERE false)"""

_FILE_FUSED = """
SELECT f.id, f.name, f.path, f.mime_type, f.modified_time, fu.vector_rank, fu.keyword_rank, fu.score
FROM (
    SELECT coalesce(v.id, k.id) AS id, v.rank AS vector_rank, k.rank AS keyword_rank,
           coalesce(%(vector_weight)s::float8 / (%(rrf_k)s + v.rank), 0)
             + coalesce(%(keyword_weight)s::float8 / (%(rrf_k)s + k.rank), 0) AS score
    FROM file_vector v
    FULL OUTER JOIN file_keyword k ON k.id = v.id
    ORDER BY score DESC, id
    LIMIT %(k)s
) fu
JOIN library_file f ON f.id = fu.id
ORDER BY fu.score DESC, f.id"""


def file_statement(shape: StatementShape) -> str:
    file_filter = file_conditions(shape.filters)
    ctes = []
    if shape.keyword:
        ctes.append(TERMS.format(prefix="|| ':*'") + ",")
        ctes.append(_FILE_KEYWORD.format(file_filter=file_filter) + ",")
    else:
        ctes.append(_FILE_NO_KEYWORD + ",")
    ctes.append(_FILE_VECTOR.format(file_filter=file_filter) if shape.vector else _FILE_NO_VECTOR)
    return "WITH" + "".join(ctes) + _FILE_FUSED

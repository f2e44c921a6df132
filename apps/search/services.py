"""Writes of the search statistics. Indexing calls these after a folder's chunks change."""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from apps.search import planning
from apps.search.models import FolderTermStats

_FOLDER_KEEP = "SELECT id FROM library_folder WHERE id = %(folder_id)s FOR KEY SHARE"
_LOCK = "SELECT pg_advisory_xact_lock(hashtext('search_folderlexeme'), mod(%(folder_id)s, 2147483647)::int)"
_DELETE_LEXEMES = "DELETE FROM search_folderlexeme WHERE folder_id = %(folder_id)s"
# Each file's lexemes first (a small hash per file, its chunks read through their file index),
# then per lexeme: its chunks and its files. Grouping the folder's (file, lexeme) pairs at once
# spills to disk: 15 s against 7 s this way for 200k chunks (bench/search/search_speed.py's folders).
_INSERT_LEXEMES = """
INSERT INTO search_folderlexeme (folder_id, lexeme, document_count, file_count)
SELECT %(folder_id)s, per_file.lexeme, sum(per_file.chunks), count(*)
FROM library_file f
CROSS JOIN LATERAL (
    SELECT t.lexeme, count(*) AS chunks
    FROM library_chunk c
    CROSS JOIN LATERAL unnest(tsvector_to_array(c.search_vector)) AS t(lexeme)
    WHERE c.folder_id = %(folder_id)s AND c.file_id = f.id AND c.search_vector IS NOT NULL
    GROUP BY t.lexeme
) per_file
WHERE f.folder_id = %(folder_id)s
GROUP BY per_file.lexeme
"""
_UPSERT_TOTALS = """
INSERT INTO search_foldertermstats (folder_id, chunk_count, total_length, total_tokens, file_count, refreshed_at)
SELECT %(folder_id)s, count(*), coalesce(sum(length(c.search_vector)), 0), coalesce(sum(c.token_count), 0),
       count(DISTINCT c.file_id), %(now)s
FROM library_chunk c
WHERE c.folder_id = %(folder_id)s AND c.search_vector IS NOT NULL
ON CONFLICT (folder_id) DO UPDATE
SET chunk_count = EXCLUDED.chunk_count, total_length = EXCLUDED.total_length,
    total_tokens = EXCLUDED.total_tokens, file_count = EXCLUDED.file_count, refreshed_at = EXCLUDED.refreshed_at
"""


def folder_lexeme_stats_refresh(*, folder_id: int) -> FolderTermStats | None:
    """Recount the folder's lexeme document frequencies (in chunks and in files), chunk and file
    counts and total lengths.

    Call it when a folder's indexing, sync or search-vector backfill has finished, not per file:
    it reads every chunk of the folder (bench/search/search_speed.py's folders on a quiet machine: 0.6 s
    for 10k chunks, 7 s for 200k; 4.6 s for 200k before it counted files). Searches in
    between stay correct: lexemes it has not counted yet rank as rare, and the rest drift slowly.
    Readers see the old statistics until the new ones commit. None when the folder is gone.
    """
    params: dict[str, Any] = {"folder_id": folder_id, "now": timezone.now()}
    with transaction.atomic(), connection.cursor() as cursor:
        # The folder cannot be deleted under us; one refresh per folder runs at a time.
        cursor.execute(_FOLDER_KEEP, params)
        if cursor.fetchone() is None:
            return None
        cursor.execute(_LOCK, params)
        cursor.execute(_DELETE_LEXEMES, params)
        cursor.execute(_INSERT_LEXEMES, params)
        cursor.execute(_UPSERT_TOTALS, params)
    planning.folder_chunk_count_forget(folder_id=folder_id)
    return FolderTermStats.objects.get(folder_id=folder_id)

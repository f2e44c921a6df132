"""The chunk writer: a file's chunks swapped in one statement pair (DELETE + binary COPY)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.db import connection
from psycopg.types.json import Jsonb

from apps.library.backfill import search_vectors_backfill_enqueue
from apps.library.chunking import ChunkPiece

_COPY_CHUNKS = (
    "COPY library_chunk (file_id, folder_id, chunk_index, text, embedding, location, token_count) "
    "FROM STDIN (FORMAT BINARY)"
)
_COPY_TYPES = ["int8", "int8", "int4", "text", "vector", "jsonb", "int4"]


def chunks_replace(*, file_id: int, folder_id: int, pieces: Sequence[ChunkPiece], vectors: np.ndarray) -> None:
    """Swap a file's chunks for new ones; call inside a transaction so readers never see a gap."""
    from pgvector.psycopg import register_vector

    connection.ensure_connection()
    # Cursors copy their connection's adapters when created: register before opening one.
    if connection.connection.adapters.types.get("vector") is None:
        register_vector(connection.connection)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM library_chunk WHERE folder_id = %s AND file_id = %s", [folder_id, file_id])
        if settings.INDEX_DEFER_SEARCH_VECTOR:
            cursor.execute("SET LOCAL folderchat.defer_search_vector = 'on'")
            search_vectors_backfill_enqueue()
        with cursor.cursor.copy(_COPY_CHUNKS) as copy:
            copy.set_types(_COPY_TYPES)
            for piece, vector in zip(pieces, vectors, strict=True):
                copy.write_row(
                    (file_id, folder_id, piece.index, piece.text, vector, Jsonb(piece.location), piece.token_count)
                )

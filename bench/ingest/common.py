"""What the ingestion benches share: the chunk HNSW statements, a timing line, Django without a database."""

from __future__ import annotations

import os

from apps.library import vector_index

# The chunk embeddings' HNSW index (one graph per partition), as the partition move builds it.
CREATE_HNSW = [vector_index.create_index_sql()]
DROP_HNSW = [vector_index.drop_index_sql()]


def timed(label: str, seconds: float, rows: int | None = None) -> None:
    rate = f"  {rows / seconds:10.0f} rows/s" if rows else ""
    print(f"  {label:<58} {seconds:8.2f} s{rate}")


def django_without_database() -> None:
    """Set Django up for a bench that only parses: settings want a database URL to exist, none is opened."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DATABASE_URL", "postgres://bench@127.0.0.1/unused")
    import django

    django.setup()

"""Drop the HNSW graph over every folder's file embeddings: no statement can use it, and every
indexed file paid for it.

A file search scores all of the folder's files exactly (search/file_statements.py), and the
organize side averages embeddings by directory (library/selectors.py): neither orders by distance
under a LIMIT, so the planner never chose the graph. Yet each file's indexing inserted its vector
into it, a graph over every folder's files whose insert cost grows with the whole installation.
Without it PostgreSQL spends 26-32% less CPU a file while indexing (bench/README.md, "Ingestion
at scale"). Dropped and built ``CONCURRENTLY`` (non-atomic), so neither direction blocks writes.
"""

from django.db import migrations


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("library", "0017_chunk_hnsw_halfvec")]

    operations = [
        migrations.RunSQL(
            "DROP INDEX CONCURRENTLY IF EXISTS library_file_embedding_hnsw",
            reverse_sql=(
                "CREATE INDEX CONCURRENTLY IF NOT EXISTS library_file_embedding_hnsw "
                "ON library_file USING hnsw (embedding vector_cosine_ops)"
            ),
        ),
    ]

"""One HNSW graph per folder bucket instead of one for the whole table (apps/library/vector_index.py).

The partial indexes are built before the table-wide one is dropped, so searches always have an
index. Non-atomic: indexes are built CONCURRENTLY. The SQL is frozen here, as a migration must be.
"""

from django.db import migrations

BUCKETS = 16  # frozen copy of apps.library.vector_index.BUCKETS


def _name(bucket: int) -> str:
    return f"library_chunk_embedding_hnsw_{bucket:02d}"


def _create(bucket: int) -> str:
    return (
        f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {_name(bucket)} ON library_chunk "
        f"USING hnsw (embedding vector_cosine_ops) WHERE (folder_id % {BUCKETS}) = {bucket}"
    )


TABLE_WIDE = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS library_chunk_embedding_hnsw "
    "ON library_chunk USING hnsw (embedding vector_cosine_ops)"
)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("library", "0005_file_source_extra"),
    ]

    operations = [
        *(
            migrations.RunSQL(_create(bucket), reverse_sql=f"DROP INDEX CONCURRENTLY IF EXISTS {_name(bucket)}")
            for bucket in range(BUCKETS)
        ),
        migrations.RunSQL("DROP INDEX CONCURRENTLY IF EXISTS library_chunk_embedding_hnsw", reverse_sql=TABLE_WIDE),
    ]

"""The chunk table hash-partitioned by folder (apps/library/chunk_partitions.py), moved while it is in use.

Non-atomic: the move copies rows in batches and builds indexes concurrently, each step its own
transaction. In the database the primary key becomes (folder_id, id) and the unique key
(folder_id, file_id, chunk_index); Django keeps ``id`` as the model's primary key. The reverse
moves the rows back into one plain table laid out as migrations 0001-0014 left it.
"""

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from apps.library import chunk_partitions
from apps.library.chunk_indexes import ChunkIndex
from apps.library.chunk_partitions import ChunkLayout

PARTITIONS = 16  # frozen: a later count is a new migration calling the same move
BUCKETS = 16  # library/0006's partial HNSW indexes, frozen

PLAIN = ChunkLayout(
    partitions=None,
    primary_key=("id",),
    unique=("file_id", "chunk_index"),
    indexes=(
        *(
            ChunkIndex(
                f"library_chunk_embedding_hnsw_{bucket:02d}",
                f"USING hnsw (embedding vector_cosine_ops) WHERE (folder_id % {BUCKETS}) = {bucket}",
            )
            for bucket in range(BUCKETS)
        ),
        ChunkIndex("library_chunk_search_vector_gin", "USING gin (search_vector)"),
        ChunkIndex("library_chunk_search_vector_null", "(id) WHERE search_vector IS NULL"),
        ChunkIndex("library_chunk_folder_idx", "(folder_id)"),
        ChunkIndex("library_chunk_file_id_6e0514c0", "(file_id)"),
    ),
)


def partition(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    chunk_partitions.chunk_table_move(layout=chunk_partitions.partitioned_layout(partitions=PARTITIONS))


def unpartition(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    chunk_partitions.chunk_table_move(layout=PLAIN)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("library", "0014_stored_message_i18n"),
        # Its storage settings (copied onto the partitions) are set on the plain table.
        ("search", "0002_chunk_storage"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(partition, unpartition)],
            state_operations=[
                migrations.RemoveConstraint(model_name="chunk", name="chunk_unique_index"),
                migrations.AddConstraint(
                    model_name="chunk",
                    constraint=models.UniqueConstraint(
                        fields=("folder", "file", "chunk_index"), name="chunk_unique_index"
                    ),
                ),
            ],
        ),
    ]

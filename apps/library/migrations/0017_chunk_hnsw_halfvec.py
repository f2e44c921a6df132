"""The chunks' HNSW index over ``embedding::halfvec(384)`` instead of ``embedding`` (apps/library/vector_index.py).

Replaced while the product runs (chunk_indexes.chunk_index_build): on the partitioned table the
new parent index is created ``ON ONLY`` the table, each partition's built ``CONCURRENTLY`` and
attached, then the old index dropped in one short transaction; on a plain table, built and dropped
``CONCURRENTLY``. Non-atomic, as ``CONCURRENTLY`` needs; if it stops, run it again. While the
running code's statement and the index disagree (new code before the migration ends, old code after
it), the HNSW leg is answered by an exact sort of the folder's rows: same results, slower in large
folders. The reverse builds the ``vector`` index back the same way. The column stays
``vector(384)``; Django's state has no index to change (the table's indexes are the partition
move's, library/0015, which on a new database already builds the ``halfvec`` one: kept here).
"""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from apps.library import chunk_indexes
from apps.library.chunk_indexes import ChunkIndex

# Frozen: library/0001's column, and the indexes as this migration found and leaves them.
DIMENSIONS = 384
VECTOR = ChunkIndex("library_chunk_embedding_hnsw", "USING hnsw (embedding vector_cosine_ops)")
HALFVEC = ChunkIndex(
    "library_chunk_embedding_halfvec_hnsw", f"USING hnsw ((embedding::halfvec({DIMENSIONS})) halfvec_cosine_ops)"
)


def to_halfvec(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    chunk_indexes.chunk_index_build(index=HALFVEC)
    chunk_indexes.chunk_index_drop(name=VECTOR.name)


def to_vector(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    chunk_indexes.chunk_index_build(index=VECTOR)
    chunk_indexes.chunk_index_drop(name=HALFVEC.name)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("library", "0016_synclog_folder_newest")]

    operations = [migrations.RunPython(to_halfvec, to_vector)]

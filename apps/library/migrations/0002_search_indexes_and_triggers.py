"""Search indexes (built CONCURRENTLY, so the migration is non-atomic) and tsvector triggers.

Bulk writers may set ``folderchat.defer_search_vector = on`` for their transaction: the chunk
trigger then leaves ``search_vector`` NULL and the backfill task fills it in batches.
"""

from django.db import migrations

CHUNK_TRIGGER = """
CREATE OR REPLACE FUNCTION library_chunk_search_vector() RETURNS trigger AS $$
BEGIN
    IF coalesce(current_setting('folderchat.defer_search_vector', true), '') = 'on' THEN
        NEW.search_vector := NULL;
    ELSE
        NEW.search_vector := to_tsvector('english', coalesce(NEW.text, ''));
    END IF;
    RETURN NEW;
END
$$ LANGUAGE plpgsql;
CREATE TRIGGER library_chunk_search_vector_trg
    BEFORE INSERT OR UPDATE OF text ON library_chunk
    FOR EACH ROW EXECUTE FUNCTION library_chunk_search_vector();
"""

FILE_TRIGGER = """
CREATE OR REPLACE FUNCTION library_file_search_vector() RETURNS trigger AS $$
BEGIN
    NEW.search_vector :=
        setweight(to_tsvector('english', coalesce(NEW.name, '')), 'A')
        || setweight(to_tsvector('english', coalesce(NEW.preview, '')), 'B');
    RETURN NEW;
END
$$ LANGUAGE plpgsql;
CREATE TRIGGER library_file_search_vector_trg
    BEFORE INSERT OR UPDATE OF name, preview ON library_file
    FOR EACH ROW EXECUTE FUNCTION library_file_search_vector();
"""


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("library", "0001_initial")]

    operations = [
        migrations.RunSQL(
            CHUNK_TRIGGER,
            reverse_sql="DROP TRIGGER IF EXISTS library_chunk_search_vector_trg ON library_chunk;"
            "DROP FUNCTION IF EXISTS library_chunk_search_vector();",
        ),
        migrations.RunSQL(
            FILE_TRIGGER,
            reverse_sql="DROP TRIGGER IF EXISTS library_file_search_vector_trg ON library_file;"
            "DROP FUNCTION IF EXISTS library_file_search_vector();",
        ),
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS library_chunk_folder_idx ON library_chunk (folder_id)",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS library_chunk_folder_idx",
        ),
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS library_chunk_embedding_hnsw "
            "ON library_chunk USING hnsw (embedding vector_cosine_ops)",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS library_chunk_embedding_hnsw",
        ),
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS library_chunk_search_vector_gin "
            "ON library_chunk USING gin (search_vector)",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS library_chunk_search_vector_gin",
        ),
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS library_chunk_search_vector_null "
            "ON library_chunk (id) WHERE search_vector IS NULL",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS library_chunk_search_vector_null",
        ),
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS library_file_search_vector_gin "
            "ON library_file USING gin (search_vector)",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS library_file_search_vector_gin",
        ),
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS library_file_embedding_hnsw "
            "ON library_file USING hnsw (embedding vector_cosine_ops)",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS library_file_embedding_hnsw",
        ),
    ]

"""File names are searchable by their parts: "2024" finds ``W2_2024.pdf``.

PostgreSQL's parser reads ``W2_2024.pdf`` as one file-name token, so only the whole name (or a
prefix of it) matched. The name now contributes both that token and its alphanumeric parts.
Existing rows are recomputed by touching ``name``, which fires the trigger.
"""

from django.db import migrations

TRIGGER_FUNCTION = """
CREATE OR REPLACE FUNCTION library_file_search_vector() RETURNS trigger AS $$
BEGIN
    NEW.search_vector :=
        setweight(to_tsvector('english', coalesce(NEW.name, '')), 'A'){name_parts}
        || setweight(to_tsvector('english', coalesce(NEW.preview, '')), 'B');
    RETURN NEW;
END
$$ LANGUAGE plpgsql;
UPDATE library_file SET name = name;
"""
NAME_PARTS = """
        || setweight(to_tsvector('english', regexp_replace(coalesce(NEW.name, ''), '[^[:alnum:]]+', ' ', 'g')), 'A')"""


class Migration(migrations.Migration):
    dependencies = [
        ("library", "0006_chunk_hnsw_by_folder_bucket"),
    ]

    operations = [
        migrations.RunSQL(
            TRIGGER_FUNCTION.format(name_parts=NAME_PARTS),
            reverse_sql=TRIGGER_FUNCTION.format(name_parts=""),
        ),
    ]

"""Each folder's words are stemmed by its own language (``Folder.language``, apps/library/language.py).

``library_folder_regconfig(folder_id)`` is the folder's text search configuration (English, as
before, while it is undecided); the chunk and file triggers, the backfill and the search statements
call it.
Folders indexed before keep English, which their stored vectors were built with.
"""

from django.db import migrations, models

REGCONFIG_FUNCTION = """
CREATE OR REPLACE FUNCTION library_folder_regconfig(folder bigint) RETURNS regconfig AS $$
    SELECT coalesce((SELECT nullif(language, '')::regconfig FROM library_folder WHERE id = folder), 'english')
$$ LANGUAGE sql STABLE;
"""

CHUNK_TRIGGER = """
CREATE OR REPLACE FUNCTION library_chunk_search_vector() RETURNS trigger AS $$
BEGIN
    IF coalesce(current_setting('folderchat.defer_search_vector', true), '') = 'on' THEN
        NEW.search_vector := NULL;
    ELSE
        NEW.search_vector := to_tsvector({config}, coalesce(NEW.text, ''));
    END IF;
    RETURN NEW;
END
$$ LANGUAGE plpgsql;
"""

FILE_TRIGGER = """
CREATE OR REPLACE FUNCTION library_file_search_vector() RETURNS trigger AS $$
DECLARE
    config regconfig := {config};
BEGIN
    NEW.search_vector :=
        setweight(to_tsvector(config, coalesce(NEW.name, '')), 'A')
        || setweight(to_tsvector(config, regexp_replace(coalesce(NEW.name, ''), '[^[:alnum:]]+', ' ', 'g')), 'A')
        || setweight(to_tsvector(config, coalesce(NEW.preview, '')), 'B');
    RETURN NEW;
END
$$ LANGUAGE plpgsql;
"""

FOLDER_CONFIG = "library_folder_regconfig(NEW.folder_id)"
ENGLISH = "'english'::regconfig"


class Migration(migrations.Migration):
    dependencies = [
        ("library", "0010_files_page_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="folder",
            name="language",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                help_text="Text search configuration for keyword search: english, german, french, ..., simple.",
                max_length=32,
            ),
        ),
        migrations.RunSQL("UPDATE library_folder SET language = 'english'", reverse_sql=migrations.RunSQL.noop),
        # Reversed in the opposite order: the triggers stop calling the function before it is dropped.
        migrations.RunSQL(REGCONFIG_FUNCTION, reverse_sql="DROP FUNCTION IF EXISTS library_folder_regconfig(bigint)"),
        migrations.RunSQL(
            CHUNK_TRIGGER.format(config=FOLDER_CONFIG) + FILE_TRIGGER.format(config=FOLDER_CONFIG),
            reverse_sql=CHUNK_TRIGGER.format(config=ENGLISH) + FILE_TRIGGER.format(config=ENGLISH),
        ),
    ]

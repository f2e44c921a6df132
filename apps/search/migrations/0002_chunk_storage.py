"""Keep a chunk's embedding and tsvector in its heap row; its text may go to TOAST instead.

With the defaults a chunk row (embedding 1.5 kB, tsvector ~1.3 kB, text ~1.2 kB) exceeds 2 kB and
PostgreSQL moves the embedding (storage EXTERNAL) and usually the tsvector out of line, so every
row an exact folder scan or the BM25 ranking reads costs a TOAST index lookup. Measured on 20k
synthetic chunks (bench/search/search_speed.py data): exact distance scan 144 -> 32 ms, tsvector match
130 -> 28 ms. Search reads the text of the k results only, so the text is what should move out.

Only the catalog changes (no table rewrite); rows written before keep their layout until
re-indexed.
"""

from django.db import migrations

FORWARD = """
ALTER TABLE library_chunk ALTER COLUMN embedding SET STORAGE MAIN;
ALTER TABLE library_chunk ALTER COLUMN search_vector SET STORAGE MAIN;
ALTER TABLE library_chunk SET (toast_tuple_target = 4000);
"""
REVERSE = """
ALTER TABLE library_chunk ALTER COLUMN embedding SET STORAGE EXTERNAL;
ALTER TABLE library_chunk ALTER COLUMN search_vector SET STORAGE EXTENDED;
ALTER TABLE library_chunk RESET (toast_tuple_target);
"""


class Migration(migrations.Migration):
    dependencies = [("search", "0001_initial"), ("library", "0002_search_indexes_and_triggers")]

    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]

# The keyword search scores each file as a whole too (apps/search/statements.py), whose length is
# its chunks' tokens: kept on the file from now on, counted once here for the files indexed before.

from django.db import migrations, models

COUNT_EXISTING = """
UPDATE library_file f SET token_count = c.tokens
FROM (SELECT file_id, sum(token_count) AS tokens FROM library_chunk GROUP BY file_id) c
WHERE c.file_id = f.id
"""


class Migration(migrations.Migration):
    dependencies = [("library", "0011_folder_language")]

    operations = [
        migrations.AddField(
            model_name="file",
            name="token_count",
            field=models.PositiveIntegerField(db_default=0, default=0, help_text="Tokens in the file's chunks."),
        ),
        migrations.RunSQL(COUNT_EXISTING, migrations.RunSQL.noop, elidable=True),
    ]

# BM25's document length is the chunk's token count (its words), not its distinct lexemes.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("search", "0002_chunk_storage")]

    operations = [
        migrations.AddField(
            model_name="foldertermstats",
            name="total_tokens",
            field=models.BigIntegerField(
                default=0, db_default=0, help_text="Sum of the chunks' token_count: BM25's average document length."
            ),
        ),
    ]

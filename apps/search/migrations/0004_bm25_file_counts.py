# The keyword search scores each file as a whole too: IDF over files and the files' average length.
# NULL until the folder's next recount (services.folder_lexeme_stats_refresh), which search
# tolerates: a lexeme's chunks stand in for its files, and the files are counted live.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("search", "0003_bm25_folder_total_tokens")]

    operations = [
        migrations.AddField(
            model_name="folderlexeme",
            name="file_count",
            field=models.IntegerField(help_text="Files holding it; NULL before the first recount.", null=True),
        ),
        migrations.AddField(
            model_name="foldertermstats",
            name="file_count",
            field=models.BigIntegerField(
                help_text="Files with such a chunk; NULL before the first recount.", null=True
            ),
        ),
    ]

"""Each folder's newest sync logs first: the folders list reads every folder's last sync."""

from django.db import migrations, models
from django.db.models import F


class Migration(migrations.Migration):
    dependencies = [("library", "0015_chunk_partitions")]

    operations = [
        migrations.AddIndex(
            model_name="synclog",
            index=models.Index(F("folder"), F("created_at").desc(), F("id").desc(), name="synclog_folder_newest"),
        ),
    ]

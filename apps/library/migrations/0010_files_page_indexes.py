"""The files page at 100,000 files (bench/ops/files_page.py): its sort orders (size, chunks, name in any
case, newest first with missing times last) and its filter by directory (a path prefix, which the
(folder, path) index cannot serve under a non-"C" collation). Built CONCURRENTLY, so the migration is non-atomic and a large
library_file table stays writable while they build."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models
from django.db.models.functions import Collate, Upper


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("library", "0009_folder_sharing"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="file",
            index=models.Index(fields=["folder", "size"], name="file_folder_size"),
        ),
        AddIndexConcurrently(
            model_name="file",
            index=models.Index(
                models.F("folder"), models.F("chunk_count"), Collate("path", "C"), name="file_folder_chunks"
            ),
        ),
        AddIndexConcurrently(
            model_name="file",
            index=models.Index(models.F("folder"), Collate("path", "C"), name="file_folder_path_bytes"),
        ),
        AddIndexConcurrently(
            model_name="file",
            index=models.Index(models.F("folder"), Upper("name"), name="file_folder_name_upper"),
        ),
        AddIndexConcurrently(
            model_name="file",
            index=models.Index(
                models.F("folder"),
                models.OrderBy(models.F("modified_time"), descending=True, nulls_last=True),
                name="file_folder_modified_desc",
            ),
        ),
    ]

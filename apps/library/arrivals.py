"""A file the app itself just wrote to a source (an upload, a fetched page): indexed at once.

The writer already holds the new file's entry, so there is nothing to list: the entry goes through
the same reconcile as a Drive change (one upsert), its indexing is queued, and the folder's
progress stream hears of it. The next sync finds the file unchanged (same id, same checksum).
"""

from __future__ import annotations

from django.db import transaction

from apps.library.indexing import files_enqueue
from apps.library.models import File, Folder, FolderStatus
from apps.library.progress import FolderProgress, folder_counters_refresh
from apps.library.reconcile import changes_apply
from apps.library.sources import ChangeSet, SourceEntry


def file_arrived(*, folder: Folder, entry: SourceEntry) -> File | None:
    """The new file's row, created pending, its indexing queued once this commits; None when the
    folder's exclude patterns leave the path out of the index."""
    with transaction.atomic():
        result = changes_apply(folder=folder, changes=ChangeSet(upserted=[entry], removed_ids=[], cursor=""))
        files_enqueue(folder_id=folder.pk, file_ids=result.to_index)
        if result.to_index:
            # The counters refresh turns it ready again once nothing is left to index.
            Folder.objects.filter(pk=folder.pk).update(status=FolderStatus.INDEXING)
        rows = File.objects.defer("embedding", "search_vector")
        file = rows.filter(folder=folder, external_id=entry.external_id).first()
    FolderProgress(folder.pk).folder_scanned(result=result, counts=folder_counters_refresh(folder_id=folder.pk))
    return file

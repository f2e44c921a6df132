"""The local-directory entries of library's source factories and sync functions."""

from __future__ import annotations

from apps.connectors.local import KnownFile, LocalSource
from apps.library.exclusions import exclusion_for
from apps.library.listing_rows import ROWS_PER_FETCH, EpochMicroseconds, from_epoch_microseconds
from apps.library.models import File, Folder
from apps.library.reconcile import folder_reconcile
from apps.library.sources import Source, SyncOutcome


def folder_local_source(folder: Folder) -> Source:
    return LocalSource(folder.external_id, exclusion=exclusion_for(folder.exclude_patterns))


def local_folder_sync(folder: Folder) -> SyncOutcome:
    """The ``local`` entry of the per-source sync functions: a full listing every time."""
    # Files whose size and mtime did not change keep their checksum: no re-reading them.
    rows = (
        File.objects.filter(folder=folder, modified_time__isnull=False)
        .annotate(modified_us=EpochMicroseconds("modified_time"))
        .values_list("path", "size", "modified_us", "checksum", "mime_type")
    )
    known = {
        path: KnownFile(size=size, modified_time=modified, checksum=checksum, mime_type=mime_type)
        for path, size, microseconds, checksum, mime_type in rows.iterator(ROWS_PER_FETCH)
        if (modified := from_epoch_microseconds(microseconds)) is not None
    }
    source = LocalSource(folder.external_id, known=known, exclusion=exclusion_for(folder.exclude_patterns))
    entries = list(source.list_entries())
    return SyncOutcome(result=folder_reconcile(folder=folder, entries=entries, problems=source.problems()), mode="full")

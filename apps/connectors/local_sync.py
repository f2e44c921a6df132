"""The local-directory entries of library's source factories and sync functions."""

from __future__ import annotations

from apps.connectors.local import KnownFile, LocalSource
from apps.core.metrics import indexing_stage_timed
from apps.library.exclusions import exclusion_for
from apps.library.listing_rows import listed_rows
from apps.library.models import File, Folder
from apps.library.reconcile import folder_reconcile
from apps.library.sources import Source, SyncOutcome


def folder_local_source(folder: Folder) -> Source:
    return LocalSource(folder.external_id, exclusion=exclusion_for(folder.exclude_patterns))


def local_folder_sync(folder: Folder) -> SyncOutcome:
    """The ``local`` entry of the per-source sync functions: a full listing every time."""
    # Files whose size and mtime did not change keep their checksum: no re-reading them.
    rows = listed_rows(File.objects.filter(folder=folder, modified_time__isnull=False)).values()
    known = {
        row.path: KnownFile(
            size=row.size, modified_time=row.modified_time, checksum=row.checksum, mime_type=row.mime_type
        )
        for row in rows
        if row.modified_time is not None
    }
    source = LocalSource(folder.external_id, known=known, exclusion=exclusion_for(folder.exclude_patterns))
    with indexing_stage_timed("list"):
        entries = list(source.list_entries())
    return SyncOutcome(result=folder_reconcile(folder=folder, entries=entries, problems=source.problems()), mode="full")

"""Drive folder sync: the changes log from the stored cursor, or a full listing diff.

A full listing diff runs when there is no cursor yet, when Drive expired it (410), and every
FOLDER_FULL_PRUNE_INTERVAL_SECONDS as a safety net against drift. Its new cursor is taken before
the listing, so nothing changed during the listing is missed. Either way the new cursor is
stored in the transaction that applies the changes it covers: a sync that fails halfway leaves
the old cursor and the old rows, and the next one starts over from there.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.connectors.base import ChangeSet, SourceEntry, SourceNotFoundError
from apps.connectors.drive.client import CursorExpiredError
from apps.connectors.drive.connection import folder_drive
from apps.connectors.drive.source import DriveSource
from apps.library.indexing import ReconcileResult, folder_reconcile
from apps.library.models import File, FileStatus, Folder
from apps.library.sync import SyncOutcome

logger = logging.getLogger(__name__)

FOLDER_NOT_FOUND = "folder not found"
_ENTRY_FIELDS = ["path", "name", "mime_type", "size", "checksum", "modified_time", "source_extra"]


def drive_folder_sync(folder: Folder) -> SyncOutcome:
    """The ``drive`` entry of the per-source sync functions."""
    drive = folder_drive(folder=folder)
    try:
        outcome = _sync(folder, drive.source)
    except SourceNotFoundError as exc:
        # Whichever call noticed (a 404 on the root, its removal in the changes log), the user
        # needs one message. A subfolder vanishing mid-sync lands here too; the next sync clears it.
        detail = "" if str(exc) == FOLDER_NOT_FOUND else f" ({exc})"
        raise SourceNotFoundError(FOLDER_NOT_FOUND + detail) from exc
    outcome.api_calls = drive.api_calls
    return outcome


def _sync(folder: Folder, source: DriveSource) -> SyncOutcome:
    if folder.sync_cursor and not _prune_due(folder):
        try:
            changes = source.changes_since(folder.sync_cursor)
        except CursorExpiredError:
            logger.info("Drive changes cursor of folder %s expired; listing it in full", folder.pk)
        else:
            with transaction.atomic():
                result = drive_changes_apply(folder=folder, changes=changes)
                Folder.objects.filter(pk=folder.pk).update(sync_cursor=changes.cursor)
            return SyncOutcome(result=result, mode="changes", cursor=changes.cursor)
    cursor = source.start_cursor()
    entries = list(source.list_entries())
    with transaction.atomic():
        result = folder_reconcile(folder=folder, entries=entries, problems=source.problems())
        Folder.objects.filter(pk=folder.pk).update(sync_cursor=cursor, last_full_listing_at=timezone.now())
    return SyncOutcome(result=result, mode="full", cursor=cursor)


def _prune_due(folder: Folder) -> bool:
    if folder.last_full_listing_at is None:
        return True
    interval = dt.timedelta(seconds=settings.FOLDER_FULL_PRUNE_INTERVAL_SECONDS)
    return folder.last_full_listing_at <= timezone.now() - interval


def drive_changes_apply(*, folder: Folder, changes: ChangeSet) -> ReconcileResult:
    """Apply a change set to the folder's File rows; what changed is queued for indexing.

    Drive ids survive renames and moves, so a new path alone is a move (chunks kept) and a new
    checksum or version a modification (re-indexed; old chunks serve until replaced). Removed
    ids the folder never held are ignored. Unindexable entries (problems) are left to the next
    full listing, which records them.
    """
    entries = {entry.external_id: entry for entry in changes.upserted}
    result = ReconcileResult()
    with transaction.atomic():
        # The same lock as folder_reconcile: the two never interleave on one folder's rows.
        Folder.objects.select_for_update().filter(pk=folder.pk).values_list("pk").first()
        existing = {
            file.external_id: file
            for file in File.objects.filter(folder=folder, external_id__in=list(entries)).defer("embedding")
        }
        creates: list[File] = []
        updates: list[File] = []
        for external_id, entry in entries.items():
            file = existing.get(external_id)
            if file is None:
                creates.append(
                    File(folder=folder, external_id=external_id, status=FileStatus.PENDING, **_fields(entry))
                )
                result.added += 1
                continue
            moved = file.path != entry.path
            modified = file.checksum != entry.checksum
            result.moved += moved and not modified
            result.modified += modified
            result.unchanged += not moved and not modified
            fields = _fields(entry)
            if any(getattr(file, name) != value for name, value in fields.items()):
                for name, value in fields.items():
                    setattr(file, name, value)
                if modified:
                    file.status = FileStatus.PENDING
                updates.append(file)
        removed = File.objects.filter(folder=folder, external_id__in=changes.removed_ids)
        result.deleted = removed.delete()[1].get(File._meta.label, 0)
        File.objects.bulk_update(updates, [*_ENTRY_FIELDS, "status"], batch_size=500)
        File.objects.bulk_create(creates, batch_size=500)
        touched = [file.external_id for file in creates] + [file.external_id for file in updates]
        result.to_index = list(
            File.objects.filter(folder=folder, external_id__in=touched)
            .exclude(status__in=[FileStatus.INDEXED, FileStatus.SKIPPED], indexed_checksum=F("checksum"))
            .order_by("path")
            .values_list("pk", flat=True)
        )
    return result


def _fields(entry: SourceEntry) -> dict[str, object]:
    return {
        "path": entry.path,
        "name": entry.name[:255],
        "mime_type": entry.mime_type[:255],
        "size": entry.size,
        "checksum": entry.checksum,
        "modified_time": entry.modified_time,
        "source_extra": dict(entry.extra),
    }

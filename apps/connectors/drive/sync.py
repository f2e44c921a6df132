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
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.connectors.drive.client import CursorExpiredError
from apps.connectors.drive.connection import folder_drive
from apps.connectors.drive.source import DriveSource
from apps.library.models import Folder
from apps.library.reconcile import changes_apply, folder_reconcile
from apps.library.sources import SourceNotFoundError, SyncOutcome

logger = logging.getLogger(__name__)

FOLDER_NOT_FOUND = "folder not found"


def drive_folder_sync(folder: Folder) -> SyncOutcome:
    """The ``drive`` entry of the per-source sync functions."""
    drive = folder_drive(folder=folder)
    try:
        outcome = _sync(folder, drive.source)
    except SourceNotFoundError as exc:
        # Whichever call noticed (a 404 on the root, its removal in the changes log), the user
        # needs one message. A subfolder vanishing mid-sync lands here too; the next sync clears it.
        if str(exc) == FOLDER_NOT_FOUND:
            raise SourceNotFoundError(gettext_noop("folder not found")) from exc
        raise SourceNotFoundError(gettext_noop("folder not found (%(detail)s)"), detail=exc.message) from exc
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
                result = changes_apply(folder=folder, changes=changes)
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

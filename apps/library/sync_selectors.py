"""Reads of a folder's sync history and of who holds its sync claim."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection

from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone

from apps.core import task_limits
from apps.library.models import Folder, SourceKind, SyncLog


def sync_log_list(*, folder: Folder) -> QuerySet[SyncLog]:
    return SyncLog.objects.filter(folder=folder).order_by("-created_at", "-id")


def sync_logs_newest(*, folder_ids: Collection[int]) -> dict[int, SyncLog]:
    """Each folder's newest sync log by folder id, in one statement (an index probe per folder)."""
    newest = SyncLog.objects.filter(folder_id=OuterRef("pk")).order_by("-created_at", "-id").values("pk")[:1]
    newest_ids = Folder.objects.filter(pk__in=folder_ids).values(newest_id=Subquery(newest))
    return {log.folder_id: log for log in SyncLog.objects.filter(pk__in=newest_ids)}


def sync_claim_stale_before(*, now: dt.datetime) -> dt.datetime:
    """A claim taken before this belongs to a dead worker: its task would have been killed by now."""
    return now - dt.timedelta(seconds=task_limits.SYNC_FOLDER.hard)


def folders_sync_claimed(*, folder_ids: Collection[int]) -> set[int]:
    """Those of the folders a live sync holds right now."""
    live = sync_claim_stale_before(now=timezone.now())
    claimed = Folder.objects.filter(pk__in=folder_ids, sync_started_at__gte=live)
    return set(claimed.values_list("pk", flat=True))


def local_folders_watched() -> list[tuple[int, str, str]]:
    """Every local folder as (id, directory, exclude patterns): what the watcher follows."""
    folders = Folder.objects.filter(source=SourceKind.LOCAL).order_by("pk")
    return list(folders.values_list("pk", "external_id", "exclude_patterns"))

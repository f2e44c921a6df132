"""Folder progress: counters recomputed from file statuses, events on the folder's channel, and
the report that the CLI shows.

Counters are never incremented: each refresh recounts from the File rows in one short
transaction, so retries, redeliveries and concurrent workers cannot make them drift.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import redis
from django.db import connection, transaction
from django.db.models import Count, Q

from apps.core.events import folder_channel, publish_event, redis_client
from apps.core.stored_messages import stored_message_json
from apps.library.models import Chunk, File, FileStatus, Folder, FolderStatus, SyncLog
from apps.library.selectors import folder_files_in_progress

if TYPE_CHECKING:
    from apps.library.reconcile import ReconcileResult

# The event after which a folder stream re-checks its reader's access.
MEMBERS_EVENT = "members"

logger = logging.getLogger(__name__)

_LOCK_FOLDER = "SELECT id FROM library_folder WHERE id = %s FOR UPDATE"
# A file still to index: the recount's "open" and the check after each file read the same list,
# which is what makes the last file's worker always see none left and recount.
_OPEN: list[str] = [FileStatus.PENDING, FileStatus.INDEXING]
# The lock above comes first: this statement's snapshot then includes every commit that
# happened before it, so the last refresh always writes the true counts.
_RECOUNT = """
UPDATE library_folder AS folder
SET files_total = counts.total,
    files_indexed = counts.indexed,
    status = CASE WHEN counts.open = 0 AND folder.status = %(indexing)s THEN %(ready)s ELSE folder.status END
FROM (
    SELECT count(*) AS total,
           count(*) FILTER (WHERE status = %(indexed)s) AS indexed,
           count(*) FILTER (WHERE status = ANY(%(open)s)) AS open,
           count(*) FILTER (WHERE status = %(skipped)s) AS skipped,
           count(*) FILTER (WHERE status = %(failed)s) AS failed
    FROM library_file WHERE folder_id = %(folder_id)s
) AS counts
WHERE folder.id = %(folder_id)s
RETURNING counts.total, counts.indexed, counts.skipped, counts.failed, counts.open, folder.status
"""


# After a file, its folder is recounted only when none of its files is left open (the folder then
# turns ready and the last event carries the final counts) or when no worker recounted it for a
# while: a recount reads every file row of the folder (30-60 ms at 100,000 files), so one per file
# made indexing a big folder quadratic (bench/ingest/ingest_scale.py). The pause is 1 s, or 20
# times the last recount's time, so recounts take about 5% of one database connection's time at
# most whatever the folder's size; a Redis key holds it for every worker.
RECOUNT_PAUSE_SECONDS = 1.0
_RECOUNT_PAUSE_FACTOR = 20


@dataclass(frozen=True)
class FolderCounts:
    total: int = 0
    indexed: int = 0
    skipped: int = 0
    failed: int = 0
    open: int = 0
    status: str = FolderStatus.PENDING

    @property
    def done(self) -> int:
        return self.total - self.open

    def as_event(self) -> dict[str, Any]:
        return {
            "files_total": self.total,
            "files_indexed": self.indexed,
            "files_skipped": self.skipped,
            "files_failed": self.failed,
            "files_done": self.done,
            "folder_status": self.status,
        }


def folder_counters_refresh(*, folder_id: int) -> FolderCounts:
    """Recount files_total / files_indexed; a folder with nothing left to index becomes ready."""
    params: dict[str, str | int | list[str]] = {
        "folder_id": folder_id,
        "indexed": FileStatus.INDEXED,
        "open": _OPEN,
        "indexing": FileStatus.INDEXING,
        "skipped": FileStatus.SKIPPED,
        "failed": FileStatus.FAILED,
        "ready": FolderStatus.READY,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_LOCK_FOLDER, [folder_id])
        cursor.execute(_RECOUNT, params)
        row = cursor.fetchone()
    return FolderCounts(*row) if row else FolderCounts()


def folder_counters_refresh_after_file(*, folder_id: int, files_left: bool = False) -> FolderCounts | None:
    """The folder's counts after one of its files finished (its status committed), or None when
    files are left and a recount is not due. The file whose commit comes last always sees none
    left open, whichever worker it is on, so the folder's final recount never goes missing.
    ``files_left``: the caller knows some are (its task holds more of them), so none is looked for."""
    left = files_left or File.objects.filter(folder_id=folder_id, status__in=_OPEN).exists()
    if left and not _recount_due(folder_id):
        return None
    started = time.monotonic()
    counts = folder_counters_refresh(folder_id=folder_id)
    pause = max(RECOUNT_PAUSE_SECONDS, _RECOUNT_PAUSE_FACTOR * (time.monotonic() - started))
    with contextlib.suppress(redis.RedisError):
        redis_client().set(_recount_key(folder_id), "1", px=int(pause * 1000))
    return counts


def _recount_due(folder_id: int) -> bool:
    try:
        return bool(redis_client().set(_recount_key(folder_id), "1", nx=True, px=int(RECOUNT_PAUSE_SECONDS * 1000)))
    except redis.RedisError:
        return True  # without Redis every file recounts, as before


def _recount_key(folder_id: int) -> str:
    return f"library:counters:paused:{folder_id}"


class FolderProgress:
    """Publishes a folder's indexing events; a Redis outage never fails the indexing itself."""

    def __init__(self, folder_id: int) -> None:
        self.folder_id = folder_id

    def file_finished(self, *, file_id: int, path: str, status: str, error: str, counts: FolderCounts | None) -> None:
        """``counts`` None: not recounted after this file (pages keep the counts of an earlier event)."""
        reason = {"error": error, "error_i18n": stored_message_json(error)}
        counted = counts.as_event() if counts is not None else {}
        self._send("file", {"file_id": file_id, "path": path, "status": status, **reason, **counted})

    def file_started(self, *, file_id: int, path: str) -> None:
        self._send("file_started", {"file_id": file_id, "path": path})

    def folder_scanned(self, *, result: ReconcileResult, counts: FolderCounts) -> None:
        self._send(
            "scan",
            {
                "added": result.added,
                "modified": result.modified,
                "deleted": result.deleted,
                "moved": result.moved,
                "queued": len(result.to_index),
                "problems": len(result.problems),
                **counts.as_event(),
            },
        )

    def indexing_started(self, *, reason: str, counts: FolderCounts | None = None) -> None:
        """Work was queued (``reason``: index, retry): pages show the folder busy before any file ends."""
        self._send("indexing", {"reason": reason, **(counts.as_event() if counts else {})})

    def folder_synced(self, *, log: SyncLog) -> None:
        """A sync's result, as the sync log keeps it (+added ~modified -deleted, or its error)."""
        self._send(
            "sync",
            {
                "sync_log_id": log.pk,
                "mode": log.mode,
                "added": log.added,
                "modified": log.modified,
                "deleted": log.deleted,
                "moved": log.moved,
                "summary": log.summary,
                "error": log.error,
                "error_i18n": log.error_i18n,
                "created_at": log.created_at.isoformat(),
            },
        )

    def folder_failed(self, *, status: str, error: str) -> None:
        self._send("folder_error", {"folder_status": status, "error": error, "error_i18n": stored_message_json(error)})

    def members_changed(self) -> None:
        """Someone was added, removed or given another role: every open stream of the folder
        re-checks its reader (apps/library/sse.py), so a revoked person's stream ends."""
        self._send(MEMBERS_EVENT, {})

    def _send(self, type: str, data: dict[str, Any]) -> None:
        try:
            publish_event(
                channel=folder_channel(self.folder_id),
                type=type,
                data={"folder_id": self.folder_id, **data},
            )
        except redis.RedisError:
            logger.warning("could not publish %s progress of folder %s", type, self.folder_id, exc_info=True)


@dataclass(frozen=True)
class FolderReport:
    """Everything an operator asks about one folder's index, read in a handful of queries."""

    folder: Folder
    statuses: dict[str, int]
    chunks: int
    chunks_without_embedding: int
    chunks_without_search_vector: int
    unindexed: list[tuple[str, str, str]]  # path, status, reason (skipped and failed files)
    last_sync: SyncLog | None
    working_on: list[tuple[str, dt.datetime | None]] = field(default_factory=list)  # path, since

    @property
    def open(self) -> int:
        return self.statuses.get(FileStatus.PENDING, 0) + self.statuses.get(FileStatus.INDEXING, 0)


def folder_report(*, folder_id: int, unindexed_limit: int = 200) -> FolderReport | None:
    folder = Folder.objects.filter(pk=folder_id).select_related("owner").first()
    if folder is None:
        return None
    files = File.objects.filter(folder_id=folder_id)
    statuses = dict(files.values_list("status").annotate(count=Count("id")).order_by())
    chunks = Chunk.objects.filter(folder_id=folder_id).aggregate(
        total=Count("id"),
        no_embedding=Count("id", filter=Q(embedding__isnull=True)),
        no_vector=Count("id", filter=Q(search_vector__isnull=True)),
    )
    unindexed = list(
        files.filter(status__in=[FileStatus.SKIPPED, FileStatus.FAILED])
        .order_by("status", "path")
        .values_list("path", "status", "error")[:unindexed_limit]
    )
    return FolderReport(
        folder=folder,
        statuses=statuses,
        chunks=chunks["total"],
        chunks_without_embedding=chunks["no_embedding"],
        chunks_without_search_vector=chunks["no_vector"],
        unindexed=unindexed,
        last_sync=SyncLog.objects.filter(folder_id=folder_id).order_by("-created_at").first(),
        working_on=folder_files_in_progress(folder_id=folder_id),
    )

"""Local folders see their changes in seconds: filesystem events (watchdog) queue the folder's sync.

One process runs this (``manage.py watch_folders``, the Procfile's ``watcher``). It watches the
directory of every local folder, and reads the set of local folders from the database every few
seconds, so folders connected or removed while it runs are picked up. Events are debounced per
folder: its sync is queued once the folder has been quiet for ``quiet`` seconds, or ``max_wait``
after its first unsynced event while writes keep coming. Opening and reading a file (the indexer
does) is no change, nor is anything under the folder's exclude patterns.

A sync that already holds the folder's claim may have listed the directory before the change, and
a second sync queued meanwhile would find the claim taken and do nothing: so a pending change waits
until no sync holds the folder, then queues its own. What the watcher cannot see (changes while it
was down, a directory past inotify's watch limit, a network filesystem sending no events) the
periodic listing (beat's ``sync_due_folders``, hourly by default) still finds.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.db import DatabaseError, close_old_connections
from kombu.exceptions import OperationalError as BrokerError
from watchdog.events import (
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from apps.library import enqueue as library_enqueue
from apps.library.exclusions import Exclusion, exclusion_for
from apps.library.sync_selectors import folders_sync_claimed, local_folders_watched

logger = logging.getLogger(__name__)

# Writes, creations, removals and renames; opening, reading and attribute changes are not changes.
CHANGES = frozenset({EVENT_TYPE_CREATED, EVENT_TYPE_MODIFIED, EVENT_TYPE_DELETED, EVENT_TYPE_MOVED, EVENT_TYPE_CLOSED})
# A directory that could not be watched (gone, inotify's limit reached) is tried again this much later.
RETRY_SECONDS = 60.0


class Debouncer:
    """Which folders are due a sync: quiet for ``quiet`` seconds, or changing for ``max_wait``.

    ``touch`` is called from the observer's threads, ``due`` and ``take`` from the watcher's loop.
    """

    def __init__(self, *, quiet: float, max_wait: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._quiet = quiet
        self._max_wait = max_wait
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: dict[int, tuple[float, float]] = {}  # folder id -> (first event, last event)

    def touch(self, folder_id: int) -> None:
        now = self._clock()
        with self._lock:
            first, _ = self._pending.get(folder_id, (now, now))
            self._pending[folder_id] = (first, now)

    def due(self) -> list[int]:
        now = self._clock()
        with self._lock:
            return [
                folder_id
                for folder_id, (first, last) in self._pending.items()
                if now - last >= self._quiet or now - first >= self._max_wait
            ]

    def take(self, folder_id: int) -> None:
        with self._lock:
            self._pending.pop(folder_id, None)


class FolderEvents(FileSystemEventHandler):
    """One folder's events, reduced to "this folder changed" for the debouncer."""

    def __init__(self, *, folder_id: int, root: str, exclusion: Exclusion, debouncer: Debouncer) -> None:
        self._folder_id = folder_id
        self._root = root
        self._exclusion = exclusion
        self._debouncer = debouncer

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in CHANGES:
            return
        # A directory's own "modified" only echoes an entry added or removed, which has its own event.
        if event.is_directory and event.event_type == EVENT_TYPE_MODIFIED:
            return
        paths = [os.fsdecode(path) for path in (event.src_path, event.dest_path) if path]
        if all(self._excluded(path, directory=event.is_directory) for path in paths):
            return
        self._debouncer.touch(self._folder_id)

    def _excluded(self, path: str, *, directory: bool) -> bool:
        relative = os.path.relpath(path, self._root)
        if relative.startswith(".."):
            return True
        return self._exclusion.excludes_directory(relative) if directory else self._exclusion.excludes(relative)


@dataclass
class _Watch:
    key: tuple[str, str]  # (directory, exclude patterns): a change of either means watching anew
    handle: ObservedWatch


class FolderWatcher:
    """Keeps one watch per local folder and queues a folder's sync when its debounced events are due."""

    def __init__(
        self,
        *,
        quiet: float,
        max_wait: float,
        poll_seconds: float,
        observer: BaseObserver | None = None,
        enqueue: Callable[[int], None] | None = None,
    ) -> None:
        self.debouncer = Debouncer(quiet=quiet, max_wait=max_wait)
        self._poll_seconds = poll_seconds
        self._observer = observer or Observer()
        self._enqueue = enqueue or _sync_folder_delay
        self._watches: dict[int, _Watch] = {}
        self._failed: dict[int, tuple[tuple[str, str], float]] = {}  # folder id -> (key, retry at)

    @property
    def watched(self) -> set[int]:
        return set(self._watches)

    def refresh(self) -> None:
        """Watch the local folders the database holds now; stop watching those no longer there."""
        close_old_connections()
        try:
            folders = {pk: (path, patterns) for pk, path, patterns in local_folders_watched()}
        except DatabaseError as exc:
            logger.warning("watcher: cannot read the local folders (%s); keeping the current watches", exc)
            return
        # A folder removed or changed is watched no more (or anew); so is one whose directory went
        # away, since inotify's watch went with it: it is watched again once the directory is back.
        for folder_id in [
            pk for pk, watch in self._watches.items() if folders.get(pk) != watch.key or not os.path.isdir(watch.key[0])
        ]:
            self._observer.unschedule(self._watches.pop(folder_id).handle)
            self.debouncer.take(folder_id)
            logger.info("watcher: stopped watching folder %s", folder_id)
        now = time.monotonic()
        for folder_id, key in folders.items():
            failed = self._failed.get(folder_id)
            if folder_id in self._watches or (failed and failed[0] == key and failed[1] > now):
                continue
            self._watch(folder_id, key)
        self._failed = {pk: failed for pk, failed in self._failed.items() if pk in folders}

    def _watch(self, folder_id: int, key: tuple[str, str]) -> None:
        directory, patterns = key
        handler = FolderEvents(
            folder_id=folder_id, root=directory, exclusion=exclusion_for(patterns), debouncer=self.debouncer
        )
        try:
            handle = self._observer.schedule(handler, directory, recursive=True)
        except OSError as exc:
            # Most often the directory is gone or inotify's watch limit (fs.inotify.max_user_watches) is reached.
            # Said once; the retries a minute apart that fail the same way are not.
            level = logging.DEBUG if folder_id in self._failed else logging.WARNING
            message = "watcher: cannot watch folder %s at %s (%s); the periodic sync covers it"
            logger.log(level, message, folder_id, directory, exc)
            self._failed[folder_id] = (key, time.monotonic() + RETRY_SECONDS)
            return
        if self._failed.pop(folder_id, None):
            self.debouncer.touch(folder_id)  # what changed while it was not watched
        self._watches[folder_id] = _Watch(key=key, handle=handle)
        logger.info("watcher: watching folder %s at %s", folder_id, directory)

    def flush(self) -> list[int]:
        """Queue the sync of every folder due one that no sync holds; the ids queued."""
        due = self.debouncer.due()
        if not due:
            return []
        close_old_connections()
        try:
            busy = folders_sync_claimed(folder_ids=due)
        except DatabaseError as exc:
            logger.warning("watcher: cannot read sync claims (%s); trying again", exc)
            return []
        queued = []
        for folder_id in due:
            if folder_id in busy:
                continue  # Its sync may have listed before this change: queue ours once it is done.
            try:
                self._enqueue(folder_id)
            except BrokerError as exc:
                logger.warning("watcher: cannot queue the sync of folder %s (%s); trying again", folder_id, exc)
                continue
            self.debouncer.take(folder_id)
            queued.append(folder_id)
        if queued:
            logger.info("watcher: queued the sync of folders %s", queued)
        return queued

    def run(self, *, stop: threading.Event, tick: float = 0.2) -> None:
        """Until ``stop`` is set: refresh the watches every ``poll_seconds`` and flush every ``tick``."""
        self._observer.start()
        try:
            next_refresh = 0.0
            while not stop.is_set():
                if time.monotonic() >= next_refresh:
                    self.refresh()
                    next_refresh = time.monotonic() + self._poll_seconds
                self.flush()
                stop.wait(tick)
        finally:
            self._observer.stop()
            self._observer.join(timeout=10)


def _sync_folder_delay(folder_id: int) -> None:
    library_enqueue.sync_folder(folder_id)

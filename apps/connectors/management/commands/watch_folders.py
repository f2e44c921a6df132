"""Watch every local folder's directory and queue its sync on changes (the Procfile's `watcher`)."""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from apps.connectors.local_watch import FolderWatcher


class Command(BaseCommand):
    help = "Watch local folders for filesystem changes and queue their sync (debounced)."

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        # honcho, compose and the tests stop it with SIGTERM; Ctrl-C sends SIGINT.
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        watcher = FolderWatcher(
            quiet=settings.WATCHER_QUIET_SECONDS,
            max_wait=settings.WATCHER_MAX_WAIT_SECONDS,
            poll_seconds=settings.WATCHER_POLL_SECONDS,
        )
        self.stdout.write("Watching local folders for changes.")
        self.stdout.flush()
        watcher.run(stop=stop)
        self.stdout.write("Stopped.")

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.core.queue_metrics import queue_consumers
from apps.core.queues import QueueName
from apps.library.indexing import FileOutcome, folder_index
from apps.library.management.commands._render import ProgressLine, summary
from apps.library.models import Folder, FolderStatus
from apps.library.progress import FolderReport, folder_report
from apps.library.services import folder_index_enqueue

_POLL_SECONDS = 0.5
_SETTLED = {FolderStatus.READY, FolderStatus.ERROR, FolderStatus.NEEDS_REAUTH}


class Command(BaseCommand):
    # The checks import every API module (LLM SDKs included): seconds that a CLI should not pay.
    requires_system_checks: list[str] = []
    help = (
        "Index a folder: queue it (default), queue it and wait until it is searchable (--wait), "
        "or do the same work in this process (--inline)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("folder_id", type=int)
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--wait", action="store_true", help="wait for the workers, with progress")
        mode.add_argument("--inline", action="store_true", help="index in this process, no worker needed")
        parser.add_argument("--timeout", type=float, default=3600.0, help="seconds --wait waits at most")
        parser.add_argument("--force", action="store_true", help="re-index unchanged files too (--inline only)")

    def handle(
        self, *args: Any, folder_id: int, wait: bool, inline: bool, timeout: float, force: bool, **options: Any
    ) -> None:
        folder = Folder.objects.filter(pk=folder_id).first()
        if folder is None:
            raise CommandError(f"No folder {folder_id}.")
        if force and not inline:
            raise CommandError("--force works with --inline only.")
        progress = ProgressLine(self.stdout)
        if inline:
            self._inline(folder, progress, force=force)
        elif wait:
            self._queue_and_wait(folder, progress, timeout)
        else:
            folder_index_enqueue(folder=folder)
            self.stdout.write(f"Queued indexing of folder {folder_id}; follow it with folder_status {folder_id}.")
            return
        report = folder_report(folder_id=folder_id)
        assert report is not None
        self.stdout.write(summary(report))
        if report.folder.status in {FolderStatus.ERROR, FolderStatus.NEEDS_REAUTH}:
            raise CommandError(f"Folder {folder_id} is in state {report.folder.status}: {report.folder.last_error}")

    def _inline(self, folder: Folder, progress: ProgressLine, *, force: bool) -> None:
        def on_file(outcome: FileOutcome) -> None:
            if outcome.counts is not None:
                note = f"{outcome.status}: {outcome.path}" if not progress.tty else outcome.path[-40:]
                progress.show(done=outcome.counts.done, total=outcome.counts.total, detail=note)

        folder_index(folder_id=folder.pk, inline=True, force=force, on_progress=on_file)
        progress.close()

    def _queue_and_wait(self, folder: Folder, progress: ProgressLine, timeout: float) -> None:
        needed = [QueueName.INDEXING_SMALL.value, QueueName.INDEXING.value]
        if settings.INDEX_DEFER_SEARCH_VECTOR:
            needed.append(QueueName.BACKFILL.value)
        # Workers currently consuming each queue (asked over the broker, answers within a second).
        consumers = queue_consumers(timeout=1.0)
        missing = [queue for queue in needed if not consumers.get(queue)]
        if missing:
            raise CommandError(
                f"No running worker consumes the {', '.join(missing)} queue(s), so --wait would wait forever. "
                f"Start one (celery -A config worker -Q {','.join(needed)}) or use --inline."
            )
        folder_index_enqueue(folder=folder)
        deadline = time.monotonic() + timeout
        while True:
            report = folder_report(folder_id=folder.pk, unindexed_limit=0)
            assert report is not None
            total = sum(report.statuses.values())
            progress.show(done=total - report.open, total=total, detail=_detail(report))
            if _searchable(report):
                break
            if time.monotonic() > deadline:
                progress.close()
                raise CommandError(f"Still indexing after {timeout:.0f} s; folder_status {folder.pk} shows progress.")
            time.sleep(_POLL_SECONDS)
        progress.close()


def _searchable(report: FolderReport) -> bool:
    return report.folder.status in _SETTLED and report.open == 0 and report.chunks_without_search_vector == 0


def _detail(report: FolderReport) -> str:
    if report.open == 0 and report.chunks_without_search_vector:
        return f"(filling {report.chunks_without_search_vector} search vectors)"
    return f"({report.folder.status})"

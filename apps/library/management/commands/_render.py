"""Terminal output shared by the folder commands: a one-line progress bar and the summary."""

from __future__ import annotations

from django.core.management.base import OutputWrapper
from django.utils import timezone

from apps.library.progress import FolderReport

_BAR_WIDTH = 30
_REASONS_SHOWN = 50


class ProgressLine:
    """Redraws one line on a terminal; elsewhere (logs, pipes) prints a line per change."""

    def __init__(self, out: OutputWrapper) -> None:
        self.out = out
        self.tty = out.isatty()
        self._last = ""

    def show(self, *, done: int, total: int, detail: str = "") -> None:
        filled = _BAR_WIDTH * done // total if total else 0
        line = f"[{'#' * filled}{'.' * (_BAR_WIDTH - filled)}] {done}/{total} files {detail}".rstrip()
        if line == self._last:
            return
        self._last = line
        if self.tty:
            self.out.write(f"\r\033[K{line}", ending="")
            self.out.flush()
        else:
            self.out.write(line)

    def close(self) -> None:
        if self.tty and self._last:
            self.out.write("")


def summary(report: FolderReport) -> str:
    folder = report.folder
    counts = report.statuses
    lines = [
        f'Folder {folder.pk} "{folder.name}" ({folder.source}: {folder.external_id}), owner {folder.owner}',
        f"status: {folder.status}",
        "files: {total} total, {indexed} indexed, {skipped} skipped, {failed} failed, {open} pending".format(
            total=sum(counts.values()),
            indexed=counts.get("indexed", 0),
            skipped=counts.get("skipped", 0),
            failed=counts.get("failed", 0),
            open=report.open,
        ),
        f"chunks: {report.chunks} (without embedding: {report.chunks_without_embedding}, "
        f"without search vector: {report.chunks_without_search_vector})",
    ]
    if report.last_sync is not None:
        sync = report.last_sync
        outcome = f"error: {sync.error}" if sync.error else f"{sync.summary}, {sync.moved} moved"
        lines.append(f"last sync: {sync.created_at:%Y-%m-%d %H:%M:%S} ({sync.mode}, {outcome}, {sync.duration_ms} ms)")
    if report.working_on:
        now = timezone.now()
        lines.append("working on:")
        lines.extend(
            f"  {path} (for {(now - since).total_seconds():.0f} s)" if since else f"  {path}"
            for path, since in report.working_on
        )
    if folder.last_error:
        lines.append(f"last error: {folder.last_error}")
    if report.unindexed:
        lines.append("not indexed:")
        lines.extend(f"  {status:<8} {path}: {reason}" for path, status, reason in report.unindexed[:_REASONS_SHOWN])
        if len(report.unindexed) > _REASONS_SHOWN:
            lines.append(f"  ... and {len(report.unindexed) - _REASONS_SHOWN} more (see folder_status or the API)")
    return "\n".join(lines)

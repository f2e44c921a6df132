from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.library.management.commands._render import summary
from apps.library.progress import folder_report


class Command(BaseCommand):
    # The checks import every API module (LLM SDKs included): seconds that a CLI should not pay.
    requires_system_checks: list[str] = []
    help = "Show a folder's index: file counts by status, chunks, last sync, and why files were not indexed."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("folder_id", type=int)

    def handle(self, *args: Any, folder_id: int, **options: Any) -> None:
        report = folder_report(folder_id=folder_id)
        if report is None:
            raise CommandError(f"No folder {folder_id}.")
        self.stdout.write(summary(report))

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    requires_system_checks: list[str] = []
    help = (
        "Print the demo's copy of the bundled sample folder (DEMO_FOLDER), copying it from the checkout "
        "the first time. The demo's uploads, moves and guideline lines change the copy, never the checkout; "
        "--refresh replaces the copy with a fresh one."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--refresh", action="store_true", help="discard the copy's changes: copy it anew")

    def handle(self, *args: Any, refresh: bool, **options: Any) -> None:
        target = Path(settings.DEMO_FOLDER)
        if refresh and target.exists():
            shutil.rmtree(target)
            self.stderr.write(f"Removed the demo copy {target} (and every change the demo made to it).")
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            # Copied beside the target, then renamed: an interrupted copy never passes for a whole one.
            partial = target.with_name(f".{target.name}.partial")
            shutil.rmtree(partial, ignore_errors=True)
            shutil.copytree(settings.DEMO_SOURCE_FOLDER, partial)
            partial.rename(target)
            self.stderr.write(f"Copied {settings.DEMO_SOURCE_FOLDER} to {target} for the demo.")
        self.stdout.write(str(target))

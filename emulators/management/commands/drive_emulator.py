"""Run the Google Drive emulator in the foreground (demos, manual testing, benchmarks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from emulators.drive.server import DriveEmulator, seed_from_directory


class Command(BaseCommand):
    help = "Serve a local Google Drive v3 emulator, optionally seeded from a directory."
    # Needs no database, URLs or models: it must start even while the rest of the project is broken.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--root", type=Path, help="Directory to copy into the emulated Drive.")
        parser.add_argument("--port", type=int, default=8765, help="Port to listen on (0: any free port).")
        parser.add_argument("--host", default="127.0.0.1", help="Interface to listen on (default: loopback).")

    def handle(self, *args: Any, **options: Any) -> None:
        root: Path | None = options["root"]
        if root is not None and not root.is_dir():
            raise CommandError(f"--root {root} is not a directory")
        try:
            emulator = DriveEmulator(host=options["host"], port=options["port"])
        except OSError as error:
            raise CommandError(f"Cannot listen on {options['host']}:{options['port']}: {error}") from error
        self.stdout.write(f"Drive emulator listening on {emulator.url}")
        self.stdout.write(f"  DRIVE_API_ENDPOINT={emulator.api_endpoint}")
        if root is not None:
            folder_id = seed_from_directory(emulator.state, root.resolve())
            self.stdout.write(f"  folder {root.resolve().name!r} has Drive id {folder_id}")
        self.stdout.flush()
        try:
            emulator.serve_forever()
        except KeyboardInterrupt:
            self.stdout.write("Stopped.")
        finally:
            emulator.stop()

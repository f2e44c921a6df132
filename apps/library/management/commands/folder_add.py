from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from apps.core.api import ApplicationError, ConflictError
from apps.library.models import Folder, SourceKind
from apps.library.services import folder_create


class Command(BaseCommand):
    # The checks import every API module (LLM SDKs included): seconds that a CLI should not pay.
    requires_system_checks: list[str] = []
    help = "Connect a local folder for a user and print its id (the existing id when it is already connected)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--local", required=True, metavar="PATH", help="directory under LOCAL_FOLDER_ROOTS")
        parser.add_argument("--owner", required=True, metavar="USERNAME")
        parser.add_argument("--name", default="")
        parser.add_argument("--index", action="store_true", help="also queue its indexing")

    def handle(self, *args: Any, local: str, owner: str, name: str, index: bool, **options: Any) -> None:
        user = get_user_model().objects.filter(username=owner).first()
        if user is None:
            raise CommandError(f"No user named {owner!r}.")
        path = str(Path(local).expanduser().resolve())
        try:
            folder = folder_create(
                owner=user, source=SourceKind.LOCAL, external_id=path, name=name, start_indexing=index
            )
        except ConflictError:
            existing = Folder.objects.filter(owner=user, source=SourceKind.LOCAL, external_id=path).first()
            if existing is None:
                raise
            self.stderr.write(f"{path} is already connected as folder {existing.pk}.")
            folder = existing
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(str(folder.pk))

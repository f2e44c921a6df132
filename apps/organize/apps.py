from typing import Any

from django.apps import AppConfig
from django.db import transaction

from apps.organize import enqueue


def _suggest_inbox_file(sender: object, *, file_id: int, path: str, **kwargs: Any) -> None:
    from apps.organize.paths import in_inbox

    if in_inbox(path):
        transaction.on_commit(lambda: enqueue.suggest_organization(file_id))


class OrganizeConfig(AppConfig):
    name = "apps.organize"
    label = "organize"

    def ready(self) -> None:
        # A file indexed in the inbox gets its organization suggestion once its chunks commit;
        # library announces the file without importing organize (which sits above it).
        from apps.library.signals import file_indexed

        file_indexed.connect(_suggest_inbox_file, dispatch_uid="organize.suggest_inbox_file")

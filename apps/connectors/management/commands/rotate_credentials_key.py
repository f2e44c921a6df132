"""Re-encrypt every stored secret with the first key of FIELD_ENCRYPTION_KEYS.

Rotation: prepend a new key to FIELD_ENCRYPTION_KEYS (all processes), run this, then drop the
old key. Rows are handled one by one, so a row that no key decrypts is reported, not fatal.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import models, transaction

from apps.connectors.models import DriveCredential, OAuthState
from apps.core.crypto import EncryptedTextField


class Command(BaseCommand):
    help = "Re-encrypt OAuth tokens at rest with the first key of FIELD_ENCRYPTION_KEYS."

    def handle(self, *args: Any, **options: Any) -> None:
        failed = 0
        for model in (DriveCredential, OAuthState):
            rotated, unreadable = _rotate(model)
            failed += len(unreadable)
            self.stdout.write(f"{model._meta.label}: {rotated} re-encrypted")
            for pk in unreadable:
                self.stderr.write(f"{model._meta.label} {pk}: no configured key decrypts it; left as it is")
        if failed:
            raise CommandError(f"{failed} row(s) could not be decrypted with any key in FIELD_ENCRYPTION_KEYS.")


def _rotate(model: type[models.Model]) -> tuple[int, list[int]]:
    fields = [field.name for field in model._meta.get_fields() if isinstance(field, EncryptedTextField)]
    rotated, unreadable = 0, []
    for pk in model._default_manager.order_by("pk").values_list("pk", flat=True):
        with transaction.atomic():
            try:
                row = model._default_manager.select_for_update().filter(pk=pk).first()
            except ValueError:  # from EncryptedTextField: no key decrypts the stored value
                unreadable.append(pk)
                continue
            if row is not None:
                # Saving encrypts afresh, and encryption always uses the first key.
                row.save(update_fields=fields)
                rotated += 1
    return rotated, unreadable

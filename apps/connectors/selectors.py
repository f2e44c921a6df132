"""Reads of connector state: a user's Drive credential."""

from __future__ import annotations

from apps.connectors.models import DriveCredential


def drive_credential_get(*, owner_id: int) -> DriveCredential | None:
    """The user's connected (not disconnected) Drive credential, if any."""
    return DriveCredential.objects.filter(owner_id=owner_id, revoked_at__isnull=True).first()

"""Writes of connector state: storing refreshed Drive tokens, disconnecting Drive."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from apps.connectors.models import DriveCredential


def drive_tokens_save(
    *, credential_id: int, access_token: str, refresh_token: str | None, expiry: dt.datetime | None
) -> None:
    """Keep a refreshed access token (and a rotated refresh token) for the next task."""
    changes: dict[str, object] = {"access_token": access_token, "token_expiry": _aware(expiry)}
    if refresh_token:
        changes["refresh_token"] = refresh_token
    # A credential disconnected meanwhile stays disconnected.
    DriveCredential.objects.filter(pk=credential_id, revoked_at__isnull=True).update(**changes)


def drive_credential_store(
    *,
    user: AbstractBaseUser,
    access_token: str,
    refresh_token: str,
    expiry: dt.datetime | None,
    scopes: list[str],
) -> DriveCredential:
    """The user's tokens from a finished consent, replacing earlier ones (a reconnect)."""
    credential, _ = DriveCredential.objects.update_or_create(
        owner_id=user.pk,
        defaults={
            "access_token": access_token,
            "refresh_token": refresh_token,
            "token_expiry": _aware(expiry),
            "scopes": scopes,
            "revoked_at": None,
        },
    )
    return credential


def drive_disconnect(*, user: AbstractBaseUser) -> None:
    """Forget the user's tokens; the grant itself stays listed in their Google account until removed there."""
    DriveCredential.objects.filter(owner_id=user.pk, revoked_at__isnull=True).update(
        access_token=None, refresh_token=None, token_expiry=None, revoked_at=timezone.now()
    )


def _aware(expiry: dt.datetime | None) -> dt.datetime | None:
    # google-auth keeps expiry as naive UTC.
    if expiry is None or expiry.tzinfo is not None:
        return expiry
    return expiry.replace(tzinfo=dt.UTC)

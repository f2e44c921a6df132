from django.conf import settings
from django.db import models

from apps.core.crypto import EncryptedTextField
from apps.core.models import TimestampedModel


class DriveCredential(TimestampedModel):
    """A user's Google OAuth tokens, encrypted at rest and never logged."""

    owner = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="drive_credential")
    # Nullable: an empty secret is stored as NULL (nothing to encrypt), e.g. once disconnected.
    access_token = EncryptedTextField(blank=True, null=True)
    refresh_token = EncryptedTextField(blank=True, null=True)
    token_expiry = models.DateTimeField(null=True, blank=True)
    scopes = models.JSONField(default=list, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Drive credential of {self.owner}"


class OAuthState(TimestampedModel):
    """One-time state for the OAuth web flow (CSRF protection on the callback)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=128, unique=True)
    code_verifier = EncryptedTextField(blank=True, null=True)

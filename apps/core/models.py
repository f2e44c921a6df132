from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils.translation import gettext_lazy as _


class TimestampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class AuditEntry(models.Model):
    """Who did what to a shared folder, kept after the folder, the file or the person is gone
    (ids and names are copied, not referenced). Append-only: a trigger refuses UPDATE and DELETE
    (migration 0002), so deleting the actor leaves their id here as it was, unconstrained."""

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, db_constraint=False, null=True, related_name="+"
    )
    actor_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=32)
    folder_id = models.BigIntegerField(null=True, db_index=True)
    folder_name = models.CharField(max_length=255, blank=True)
    target = models.CharField(max_length=1024, blank=True, help_text="The person or file acted on.")
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name_plural = "audit entries"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.actor_name} {self.action} {self.target}"


class TokenScope(models.TextChoices):
    READ = "read", _("Read folders, files, documents and conversations")
    SEARCH = "search", _("Search folders")
    CHAT = "chat", _("Chat: standard and agent runs and their event streams")
    MANAGE = "manage", _("Manage: sync, re-index, settings, members, folders, uploads and moves")


class PersonalToken(models.Model):
    """An API token a person made for a script or a client (`Authorization: Bearer fc_...`).

    Only the SHA-256 of the secret is kept: the secret is high-entropy, so a fast hash is as good
    as a slow one, and a stolen table holds nothing that authenticates. `prefix` is the secret's
    non-secret start, for recognising a token in a list.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="personal_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)
    digest = models.CharField(max_length=64, unique=True)
    scopes = ArrayField(models.CharField(max_length=16, choices=TokenScope.choices))
    folder_ids = ArrayField(
        models.BigIntegerField(), null=True, blank=True, help_text="The only folders it reaches; null: all."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class Preferences(models.Model):
    """A person's own settings of the interface: one row, made when they first choose something."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="preferences"
    )
    # A code of settings.LANGUAGES (checked when set, not a column constraint: adding a language
    # needs no migration).
    language = models.CharField(
        max_length=8, blank=True, help_text="The interface's language; empty: the browser's (Accept-Language)."
    )

    class Meta:
        verbose_name_plural = "preferences"

    def __str__(self) -> str:
        return f"{self.user_id}: {self.language or 'browser language'}"

"""Where inbox files belong: suggestions, the user's settings, decisions that teach, moves to undo."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from apps.core.models import TimestampedModel
from apps.library.models import File, Folder


class SuggestionStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    ACCEPTED = "accepted", _("Accepted")
    REJECTED = "rejected", _("Rejected")
    EXPIRED = "expired", _("Expired")


class OrganizationSuggestion(TimestampedModel):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="suggestions")
    file = models.ForeignKey(File, on_delete=models.CASCADE, related_name="suggestions")
    source_path = models.CharField(max_length=1024)
    target_folder = models.CharField(max_length=1024, help_text="Folder path relative to the root")
    reasoning = models.TextField(blank=True)
    confidence = models.FloatField(default=0.0)
    alternatives = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=SuggestionStatus.choices, default=SuggestionStatus.PENDING)
    message = models.ForeignKey("chat.Message", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["file"],
                condition=models.Q(status="pending"),
                name="one_pending_suggestion_per_file",
            )
        ]
        indexes = [models.Index(fields=["owner", "status", "-created_at"])]


class OrganizationSettings(TimestampedModel):
    owner = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="organization_settings"
    )
    auto_suggest = models.BooleanField(default=True)
    suggest_threshold = models.FloatField(default=0.8)
    auto_move = models.BooleanField(default=False)
    auto_move_threshold = models.FloatField(default=0.95)
    include_folders = models.JSONField(default=list, blank=True)
    exclude_folders = models.JSONField(default=list, blank=True)

    class Meta:
        verbose_name_plural = "organization settings"


class DecisionAction(models.TextChoices):
    ACCEPT = "accept", "Accepted"
    REJECT = "reject", "Rejected"
    CHOOSE = "choose", "Chose another folder"


class OrganizationDecision(TimestampedModel):
    """What the user decided on a suggestion; similar future files learn from it."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="+")
    suggestion = models.ForeignKey(
        OrganizationSuggestion, on_delete=models.SET_NULL, null=True, related_name="decisions"
    )
    file_name = models.CharField(max_length=255)
    suggested_target = models.CharField(max_length=1024)
    final_target = models.CharField(max_length=1024, blank=True)
    action = models.CharField(max_length=8, choices=DecisionAction.choices)
    digest_embedding = VectorField(dimensions=384, null=True, blank=True)


class FileMove(TimestampedModel):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    file = models.ForeignKey(File, on_delete=models.CASCADE, related_name="moves")
    suggestion = models.ForeignKey(
        OrganizationSuggestion, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    from_path = models.CharField(max_length=1024)
    to_path = models.CharField(max_length=1024)
    automatic = models.BooleanField(default=False)
    undone_at = models.DateTimeField(null=True, blank=True)

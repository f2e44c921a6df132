from django.conf import settings
from django.db import models


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

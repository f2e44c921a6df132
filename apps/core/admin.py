from __future__ import annotations

from django.contrib import admin

from apps.core.models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin[AuditEntry]):
    """Read-only: an audit log that can be edited proves nothing."""

    list_display = ["created_at", "actor_name", "action", "folder_name", "target"]
    list_filter = ["action"]
    search_fields = ["actor_name", "folder_name", "target"]
    readonly_fields = [field.name for field in AuditEntry._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

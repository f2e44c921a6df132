from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from apps.core.models import AuditEntry, PersonalToken
from apps.core.queue_metrics import queue_metrics_list


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin[AuditEntry]):
    """Read-only, superusers included: an audit log that can be edited proves nothing (the
    database refuses it too, see migration 0002)."""

    list_display = ["created_at", "actor_name", "action", "folder_name", "target"]
    list_filter = ["action"]
    search_fields = ["actor_name", "folder_name", "target"]
    readonly_fields = [field.name for field in AuditEntry._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: object, obj: object = None) -> bool:
        return False  # which also takes away the list's bulk "delete selected" action


@admin.register(PersonalToken)
class PersonalTokenAdmin(admin.ModelAdmin[PersonalToken]):
    """Tokens are made by their owners (the API tokens page); staff may rename, narrow or revoke
    them, never see or set a secret (only its digest is stored)."""

    list_display = ["name", "user", "prefix", "scopes", "created_at", "expires_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "prefix", "user__username"]
    readonly_fields = ["user", "prefix", "digest", "created_at", "last_used_at"]

    def has_add_permission(self, request: object) -> bool:
        return False


def queue_metrics_view(request: HttpRequest) -> HttpResponse:
    """The queues page, linked from the admin index (wrapped in ``admin_site.admin_view``: staff only)."""
    context = {**admin.site.each_context(request), "title": "Queues", "queues": queue_metrics_list()}
    return TemplateResponse(request, "admin/core/queues.html", context)

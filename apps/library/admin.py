from __future__ import annotations

from collections import defaultdict

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from apps.library.models import (
    Chunk,
    File,
    Folder,
    FolderInvitation,
    FolderMembership,
    IndexingJob,
    SyncLog,
    UserQuota,
)
from apps.library.services import folder_index_enqueue, folder_sync_enqueue, folder_update


@admin.register(Folder)
class FolderAdmin(admin.ModelAdmin[Folder]):
    list_display = ["name", "owner", "source", "status", "files_indexed", "files_total", "last_synced_at"]
    list_filter = ["source", "status"]
    search_fields = ["name", "external_id", "owner__username"]
    readonly_fields = [
        "files_total",
        "files_indexed",
        "last_synced_at",
        "sync_cursor",
        "sync_started_at",
        "last_full_listing_at",
        "created_at",
        "updated_at",
    ]
    actions = ["reindex", "sync_now"]

    def save_model(self, request: HttpRequest, obj: Folder, form: ModelForm[Folder], change: bool) -> None:
        patterns = obj.exclude_patterns
        if change and "exclude_patterns" in form.changed_data:
            # Through the service: the next sync must drop (or bring back) the files it concerns.
            obj.exclude_patterns = Folder.objects.values_list("exclude_patterns", flat=True).get(pk=obj.pk)
            super().save_model(request, obj, form, change)
            folder_update(folder=obj, exclude_patterns=patterns)
            return
        super().save_model(request, obj, form, change)

    @admin.action(description="Re-index selected folders")
    def reindex(self, request: HttpRequest, queryset: QuerySet[Folder]) -> None:
        for folder in queryset:
            folder_index_enqueue(folder=folder)
        self.message_user(request, f"Queued indexing of {queryset.count()} folder(s).", messages.SUCCESS)

    @admin.action(description="Sync selected folders now")
    def sync_now(self, request: HttpRequest, queryset: QuerySet[Folder]) -> None:
        for folder in queryset:
            folder_sync_enqueue(folder=folder)
        self.message_user(request, f"Queued sync of {queryset.count()} folder(s).", messages.SUCCESS)


@admin.register(File)
class FileAdmin(admin.ModelAdmin[File]):
    list_display = ["path", "folder", "mime_type", "size", "status", "chunk_count", "indexed_at"]
    list_filter = ["status", "mime_type"]
    search_fields = ["path", "name", "external_id"]
    list_select_related = ["folder"]
    exclude = ["embedding"]
    readonly_fields = [
        "checksum",
        "indexed_checksum",
        "indexed_at",
        "chunk_count",
        "preview",
        "digest",
        "error",
        "created_at",
        "updated_at",
    ]
    actions = ["reindex"]

    @admin.action(description="Re-index selected files")
    def reindex(self, request: HttpRequest, queryset: QuerySet[File]) -> None:
        from apps.library.indexing import files_enqueue

        ids_by_folder: dict[int, list[int]] = defaultdict(list)
        for file_id, folder_id in queryset.values_list("pk", "folder_id"):
            ids_by_folder[folder_id].append(file_id)
        # Forget what was indexed, or the unchanged files would be no-ops.
        queryset.update(indexed_checksum="")
        for folder_id, file_ids in ids_by_folder.items():
            files_enqueue(folder_id=folder_id, file_ids=file_ids)
        count = sum(map(len, ids_by_folder.values()))
        self.message_user(request, f"Queued re-indexing of {count} file(s).", messages.SUCCESS)


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin[Chunk]):
    list_display = ["file", "chunk_index", "token_count"]
    search_fields = ["text"]
    raw_id_fields = ["file", "folder"]
    exclude = ["embedding"]
    readonly_fields = ["location", "token_count"]


@admin.register(IndexingJob)
class IndexingJobAdmin(admin.ModelAdmin[IndexingJob]):
    list_display = ["kind", "folder", "file", "status", "attempts", "started_at", "finished_at"]
    list_filter = ["kind", "status"]
    raw_id_fields = ["folder", "file"]
    readonly_fields = ["celery_task_id", "attempts", "error", "started_at", "finished_at"]


@admin.register(SyncLog)
class SyncLogAdmin(admin.ModelAdmin[SyncLog]):
    list_display = ["folder", "mode", "summary", "api_calls", "duration_ms", "created_at"]
    list_filter = ["mode"]
    raw_id_fields = ["folder"]


@admin.register(FolderMembership)
class FolderMembershipAdmin(admin.ModelAdmin[FolderMembership]):
    list_display = ["folder", "user", "role", "added_by", "created_at"]
    list_filter = ["role"]
    search_fields = ["folder__name", "user__username"]
    raw_id_fields = ["folder", "user", "added_by"]


@admin.register(FolderInvitation)
class FolderInvitationAdmin(admin.ModelAdmin[FolderInvitation]):
    list_display = ["folder", "role", "invitee", "created_by", "expires_at", "accepted_by", "accepted_at"]
    list_filter = ["role"]
    search_fields = ["folder__name", "invitee"]
    exclude = ["token_hash"]
    raw_id_fields = ["folder", "created_by", "accepted_by"]


@admin.register(UserQuota)
class UserQuotaAdmin(admin.ModelAdmin[UserQuota]):
    """A user's own limits over the folders they own; an empty field uses the QUOTA_* setting.
    Raising a limit lets the next sync index the files skipped for it."""

    list_display = ["user", "folders", "files", "bytes", "chunks"]
    search_fields = ["user__username"]
    autocomplete_fields = ["user"]

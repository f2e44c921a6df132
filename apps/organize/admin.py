from django.contrib import admin

from apps.organize.models import FileMove, OrganizationDecision, OrganizationSettings, OrganizationSuggestion


@admin.register(OrganizationSuggestion)
class OrganizationSuggestionAdmin(admin.ModelAdmin[OrganizationSuggestion]):
    list_display = ["source_path", "target_folder", "confidence", "status", "owner", "created_at"]
    list_filter = ["status"]
    search_fields = ["source_path", "target_folder"]
    raw_id_fields = ["owner", "folder", "file", "message"]


@admin.register(OrganizationSettings)
class OrganizationSettingsAdmin(admin.ModelAdmin[OrganizationSettings]):
    list_display = ["owner", "auto_suggest", "suggest_threshold", "auto_move", "auto_move_threshold"]


@admin.register(OrganizationDecision)
class OrganizationDecisionAdmin(admin.ModelAdmin[OrganizationDecision]):
    list_display = ["file_name", "action", "suggested_target", "final_target", "owner", "created_at"]
    list_filter = ["action"]
    exclude = ["digest_embedding"]


@admin.register(FileMove)
class FileMoveAdmin(admin.ModelAdmin[FileMove]):
    list_display = ["from_path", "to_path", "automatic", "undone_at", "owner", "created_at"]
    list_filter = ["automatic"]
    raw_id_fields = ["file", "suggestion"]

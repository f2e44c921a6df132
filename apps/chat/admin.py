from django.contrib import admin

from apps.chat.models import AgentRun, Conversation, Message, WebhookTool


class MessageInline(admin.TabularInline[Message, Conversation]):
    model = Message
    extra = 0
    fields = ("role", "type", "content", "created_at")
    readonly_fields = fields


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin[Conversation]):
    list_display = ["__str__", "owner", "folder", "kind", "status", "last_activity_at"]
    list_filter = ["kind", "status"]
    search_fields = ["title", "owner__username"]
    raw_id_fields = ["owner", "folder"]
    inlines = [MessageInline]


@admin.register(AgentRun)
class AgentRunAdmin(admin.ModelAdmin[AgentRun]):
    list_display = ["id", "owner", "mode", "status", "iterations", "created_at", "finished_at"]
    list_filter = ["mode", "status"]
    raw_id_fields = ["owner", "conversation", "question", "answer"]
    readonly_fields = ["tool_calls", "metrics", "fallback_reason", "error", "started_at", "finished_at"]


@admin.register(WebhookTool)
class WebhookToolAdmin(admin.ModelAdmin[WebhookTool]):
    list_display = ["name", "url", "enabled", "timeout_seconds"]
    list_filter = ["enabled"]
    search_fields = ["name", "description"]
    filter_horizontal = ["folders"]

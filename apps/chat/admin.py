from typing import Any

from django import forms
from django.contrib import admin

from apps.chat.agent.tools import BUILTIN_TOOL_NAMES
from apps.chat.agent.tools.webhooks import webhook_problems
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


class WebhookToolForm(forms.ModelForm[WebhookTool]):
    """Refuses what the agent would silently leave out: a bad schema, a host off the allowlist."""

    url = forms.URLField(max_length=200, assume_scheme="https")

    class Meta:
        model = WebhookTool
        fields = ["name", "description", "url", "input_schema", "timeout_seconds", "enabled", "folders"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if {"name", "url", "input_schema"} <= cleaned.keys():
            problems = webhook_problems(
                name=cleaned["name"],
                url=cleaned["url"],
                input_schema=cleaned["input_schema"] or {},
                reserved=BUILTIN_TOOL_NAMES,
            )
            if problems:
                raise forms.ValidationError(problems)
        return cleaned


@admin.register(WebhookTool)
class WebhookToolAdmin(admin.ModelAdmin[WebhookTool]):
    form = WebhookToolForm
    list_display = ["name", "url", "enabled", "timeout_seconds"]
    list_filter = ["enabled"]
    search_fields = ["name", "description"]
    filter_horizontal = ["folders"]

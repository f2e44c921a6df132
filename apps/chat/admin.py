import datetime as dt
from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils.dateparse import parse_date, parse_datetime

from apps.chat.agent.tools import BUILTIN_TOOL_NAMES
from apps.chat.agent.tools.webhooks import webhook_problems
from apps.chat.metrics import agent_metrics_summary
from apps.chat.models import AgentRun, Conversation, Message, MessageFeedback, WebhookTool


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
    list_display = ["id", "owner", "mode", "status", "language", "iterations", "created_at", "finished_at"]
    list_filter = ["mode", "status"]
    raw_id_fields = ["owner", "conversation", "question", "answer"]
    readonly_fields = ["language", "tool_calls", "metrics", "fallback_reason", "error", "started_at", "finished_at"]
    change_list_template = "admin/chat/agentrun/change_list.html"

    def get_urls(self) -> list[URLPattern]:
        metrics = path("metrics/", self.admin_site.admin_view(self.metrics_view), name="chat_agentrun_metrics")
        return [metrics, *super().get_urls()]

    def metrics_view(self, request: HttpRequest) -> HttpResponse:
        """Agent metrics over every user's runs, optionally for one folder and since a date."""
        folder_id = request.GET.get("folder_id", "")
        since = parse_datetime(request.GET.get("since", "")) or _parse_day(request.GET.get("since", ""))
        summary = agent_metrics_summary(
            owner_id=None, folder_id=int(folder_id) if folder_id.isdigit() else None, since=since
        )
        context = {
            **self.admin_site.each_context(request),
            "title": "Agent metrics",
            "opts": self.model._meta,
            "summary": summary,
            "folder_id": folder_id,
            "since": request.GET.get("since", ""),
        }
        return TemplateResponse(request, "admin/chat/agentrun/metrics.html", context)


@admin.register(MessageFeedback)
class MessageFeedbackAdmin(admin.ModelAdmin[MessageFeedback]):
    list_display = ["message", "user", "rating", "mode", "comment", "updated_at"]
    list_filter = ["rating", "updated_at"]
    search_fields = ["comment", "user__username"]
    raw_id_fields = ["message", "user"]
    list_select_related = ["message", "user"]

    @admin.display(description="Mode")
    def mode(self, feedback: MessageFeedback) -> str:
        return str(feedback.message.metadata.get("mode", ""))


def _parse_day(value: str) -> dt.datetime | None:
    day = parse_date(value) if value else None
    return dt.datetime.combine(day, dt.time.min, tzinfo=dt.UTC) if day else None


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

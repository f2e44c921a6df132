from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from apps.llm.models import ModelPrice, UsageBudget, UsageRecord
from apps.llm.usage_selectors import usage_by_user_and_day

CHART_ROWS = 60  # user-days shown in the chart and table, newest first


@admin.register(ModelPrice)
class ModelPriceAdmin(admin.ModelAdmin[ModelPrice]):
    """Overrides `LLM_PRICES` for the model: calls recorded from now on are priced with it."""

    list_display = ["model", "input_per_million", "output_per_million", "cached_per_million", "updated_at"]
    search_fields = ["model"]


@admin.register(UsageBudget)
class UsageBudgetAdmin(admin.ModelAdmin[UsageBudget]):
    """A user's own limits; an empty field uses the setting. Checked before each model call."""

    list_display = ["user", "daily_tokens", "monthly_cost"]
    search_fields = ["user__username"]
    autocomplete_fields = ["user"]


@admin.register(UsageRecord)
class UsageRecordAdmin(admin.ModelAdmin[UsageRecord]):
    """Read-only: the record of what was spent. The list adds totals per user and UTC day, with a chart."""

    list_display = [
        "created_at",
        "user",
        "provider",
        "model",
        "input_tokens",
        "output_tokens",
        "cached_tokens",
        "estimated",
        "cost",
        "folder_id",
        "run_id",
    ]
    list_filter = ["provider", "model", "estimated", "created_at"]
    search_fields = ["user__username", "model"]
    date_hierarchy = "created_at"
    change_list_template = "admin/llm/usagerecord/change_list.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        response = super().changelist_view(request, extra_context)
        if not isinstance(response, TemplateResponse) or response.context_data is None:
            return response  # a redirect (a bad filter) has no list to sum
        changelist = response.context_data["cl"]
        rows = usage_by_user_and_day(records=changelist.queryset)[:CHART_ROWS]
        peak = max((row["tokens"]["input"] + row["tokens"]["output"] for row in rows), default=0) or 1
        for row in rows:
            row["total_tokens"] = row["tokens"]["input"] + row["tokens"]["output"]
            row["percent"] = round(100 * row["total_tokens"] / peak)
        response.context_data["usage_rows"] = rows
        return response

"""Sets with their questions; runs with their configuration, metrics and regression flag, and their
results read-only (a run's record is what was measured)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from apps.evaluation.models import EvaluationQuestion, EvaluationResult, EvaluationRun, EvaluationSet
from apps.evaluation.scoring import REGRESSION_METRICS


class EvaluationQuestionInline(admin.TabularInline[EvaluationQuestion, EvaluationSet]):
    model = EvaluationQuestion
    extra = 0
    fields = ["position", "question", "expected_files", "expected_facts"]


@admin.register(EvaluationSet)
class EvaluationSetAdmin(admin.ModelAdmin[EvaluationSet]):
    list_display = ["name", "folder", "nightly", "regression_margin", "created_by", "created_at"]
    list_filter = ["nightly"]
    search_fields = ["name", "folder__name"]
    raw_id_fields = ["folder", "created_by"]
    inlines = [EvaluationQuestionInline]


RESULT_FIELDS: tuple[str, ...] = (
    "question",
    "answer",
    "cited_files",
    "hit_rank",
    "facts_found",
    "answered",
    "duration_ms",
    "tokens",
    "cost",
    "error",
)


class EvaluationResultInline(admin.TabularInline[EvaluationResult, EvaluationRun]):
    model = EvaluationResult
    extra = 0
    can_delete = False
    fields = RESULT_FIELDS
    readonly_fields = RESULT_FIELDS

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin[EvaluationRun]):
    list_display = ["set", "status", "mode", "model", "trigger", "hit_at_5", "mrr", "regression", "created_at"]
    list_filter = ["regressed", "status", "mode", "trigger"]
    search_fields = ["set__name"]
    readonly_fields = [
        "set",
        "status",
        "mode",
        "model",
        "trigger",
        "configuration",
        "metrics",
        "questions_total",
        "questions_done",
        "regressed",
        "regressed_metrics",
        "compared_with",
        "error",
        "created_by",
        "started_at",
        "finished_at",
    ]
    inlines = [EvaluationResultInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs start from the page or the API, where their task is queued

    @admin.display(description="hit@5")
    def hit_at_5(self, run: EvaluationRun) -> object:
        return run.metrics.get("hit_at_5")

    @admin.display(description="MRR")
    def mrr(self, run: EvaluationRun) -> object:
        return run.metrics.get("mrr")

    @admin.display(description="Regression", ordering="regressed")
    def regression(self, run: EvaluationRun) -> str:
        """Said in words, not only a colour: which metrics dropped past the margin."""
        if not run.regressed:
            return "—"
        dropped = run.regressed_metrics
        return "Regressed: " + ", ".join(
            f"{name} {dropped[name]['previous']} → {dropped[name]['now']}"
            for name in REGRESSION_METRICS
            if name in dropped
        )

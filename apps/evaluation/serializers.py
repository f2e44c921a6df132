"""Output shapes of evaluation sets, runs and results."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.evaluation.models import EvaluationQuestion, EvaluationResult, EvaluationRun, EvaluationSet


class MetricsOutputSerializer(serializers.Serializer):
    """A done run's metrics (null until then, and for a share with nothing to count)."""

    questions = serializers.IntegerField(allow_null=True)
    hit_at_1 = serializers.FloatField(allow_null=True, help_text="Share whose first expected file is cited first.")
    hit_at_5 = serializers.FloatField(allow_null=True, help_text="... among the first five files cited.")
    mrr = serializers.FloatField(
        allow_null=True, help_text="Mean of 1/rank of the first expected file cited (0: none)."
    )
    citation_precision = serializers.FloatField(allow_null=True, help_text="Share of cited files that are expected.")
    facts_found = serializers.FloatField(allow_null=True, help_text="Share of expected facts the answers state.")
    answered_share = serializers.FloatField(allow_null=True, help_text="Share not answered with 'found nothing'.")
    latency_p50 = serializers.IntegerField(allow_null=True, help_text="Milliseconds per question, median.")
    latency_p95 = serializers.IntegerField(allow_null=True, help_text="Milliseconds per question, 95th percentile.")
    tokens = serializers.IntegerField(allow_null=True, help_text="Model tokens (input + output) of every answer.")
    cost = serializers.FloatField(allow_null=True, help_text="USD, from the model usage records of the answers.")


class DroppedMetricOutputSerializer(serializers.Serializer):
    previous = serializers.FloatField()
    now = serializers.FloatField()
    drop = serializers.FloatField()


class RegressionOutputSerializer(serializers.Serializer):
    flagged = serializers.BooleanField(source="regressed", help_text="A metric dropped past the set's margin.")
    compared_with = serializers.UUIDField(
        source="compared_with_id", allow_null=True, help_text="The previous done run."
    )
    margin = serializers.SerializerMethodField()
    dropped = serializers.DictField(
        source="regressed_metrics", child=DroppedMetricOutputSerializer(), help_text="By metric name."
    )

    def get_margin(self, run: EvaluationRun) -> float | None:
        margin = run.configuration.get("regression_margin")
        return float(margin) if isinstance(margin, int | float) else None


class ProgressOutputSerializer(serializers.Serializer):
    done = serializers.IntegerField(source="questions_done")
    total = serializers.IntegerField(source="questions_total")


class EvaluationRunOutputSerializer(serializers.ModelSerializer):
    metrics = serializers.SerializerMethodField()
    regression = RegressionOutputSerializer(source="*")
    progress = ProgressOutputSerializer(source="*")
    configuration = serializers.JSONField(
        help_text="What answered: mode, provider, model, search settings, the folder's index (set when it starts)."
    )
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)

    class Meta:
        model = EvaluationRun
        fields = [
            "id",
            "status",
            "mode",
            "model",
            "trigger",
            "configuration",
            "metrics",
            "regression",
            "progress",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]

    @extend_schema_field(MetricsOutputSerializer)
    def get_metrics(self, run: EvaluationRun) -> dict[str, Any]:
        return dict(MetricsOutputSerializer(run.metrics).data)


class EvaluationQuestionOutputSerializer(serializers.ModelSerializer):
    expected_files = serializers.ListField(child=serializers.CharField())
    expected_facts = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = EvaluationQuestion
        fields = ["id", "position", "question", "expected_files", "expected_facts"]


class EvaluationSetOutputSerializer(serializers.ModelSerializer):
    folder_id = serializers.IntegerField()
    question_count = serializers.IntegerField()
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    last_run = serializers.SerializerMethodField(help_text="The latest run, whatever its status; null: never run.")

    class Meta:
        model = EvaluationSet
        fields = [
            "id",
            "folder_id",
            "name",
            "nightly",
            "regression_margin",
            "question_count",
            "created_by",
            "created_at",
            "updated_at",
            "last_run",
        ]

    @extend_schema_field(EvaluationRunOutputSerializer(allow_null=True))
    def get_last_run(self, evaluation_set: EvaluationSet) -> dict[str, Any] | None:
        run = self.context.get("last_runs", {}).get(getattr(evaluation_set, "last_run_id", None))
        return None if run is None else dict(EvaluationRunOutputSerializer(run).data)


class EvaluationSetDetailOutputSerializer(EvaluationSetOutputSerializer):
    questions = EvaluationQuestionOutputSerializer(many=True)
    runs = serializers.SerializerMethodField(
        help_text="The latest 100 runs, newest first, each with its configuration."
    )

    class Meta(EvaluationSetOutputSerializer.Meta):
        fields = [*EvaluationSetOutputSerializer.Meta.fields, "questions", "runs"]

    @extend_schema_field(EvaluationRunOutputSerializer(many=True))
    def get_runs(self, evaluation_set: EvaluationSet) -> list[dict[str, Any]]:
        return list(EvaluationRunOutputSerializer(self.context["runs"], many=True).data)


class EvaluationResultOutputSerializer(serializers.ModelSerializer):
    question_id = serializers.IntegerField()
    position = serializers.IntegerField(source="question.position")
    question = serializers.CharField(source="question.question")
    expected_files = serializers.ListField(source="question.expected_files", child=serializers.CharField())
    expected_facts = serializers.ListField(source="question.expected_facts", child=serializers.CharField())
    cited_files = serializers.ListField(child=serializers.CharField(), help_text="In the order the answer cites them.")
    facts_found = serializers.ListField(child=serializers.CharField())
    cost = serializers.FloatField()

    class Meta:
        model = EvaluationResult
        fields = [
            "question_id",
            "position",
            "question",
            "expected_files",
            "expected_facts",
            "answer",
            "cited_files",
            "hit_rank",
            "facts_found",
            "answered",
            "duration_ms",
            "tokens",
            "cost",
            "error",
        ]


class EvaluationRunDetailOutputSerializer(EvaluationRunOutputSerializer):
    set_id = serializers.IntegerField()
    folder_id = serializers.IntegerField(source="set.folder_id")
    results = serializers.SerializerMethodField()

    class Meta(EvaluationRunOutputSerializer.Meta):
        fields = [*EvaluationRunOutputSerializer.Meta.fields, "set_id", "folder_id", "results"]

    @extend_schema_field(EvaluationResultOutputSerializer(many=True))
    def get_results(self, run: EvaluationRun) -> list[dict[str, Any]]:
        return list(EvaluationResultOutputSerializer(self.context["results"], many=True).data)


class GeneratedSourceOutputSerializer(serializers.Serializer):
    file = serializers.CharField(help_text="The file the question was drawn from: its expected file.")
    location = serializers.DictField(
        help_text="Where in it: `chunk` (the passage's chunk), `section` (its heading), `page`, `sheet`, `range`..."
    )
    excerpt = serializers.CharField(help_text="The line or passage the question was written from.")
    by = serializers.ChoiceField(choices=["offline", "model"], help_text="Who wrote the question.")


class GeneratedQuestionOutputSerializer(serializers.Serializer):
    question = serializers.CharField()
    expected_files = serializers.ListField(child=serializers.CharField())
    expected_facts = serializers.ListField(child=serializers.CharField())
    source = GeneratedSourceOutputSerializer()  # type: ignore[assignment]  # a field named `source`


class GeneratedOutputSerializer(serializers.Serializer):
    questions = GeneratedQuestionOutputSerializer(many=True)
    seed = serializers.IntegerField(help_text="The same seed over the same index gives the same questions.")
    method = serializers.ChoiceField(
        choices=["offline", "model"], help_text="offline: no model configured; model: the answer role's model."
    )
    notices = serializers.ListField(
        child=serializers.CharField(), help_text="Fewer questions than asked, or the model failing, in words."
    )

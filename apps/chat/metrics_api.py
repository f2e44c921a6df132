"""`GET /api/metrics/agent`: the caller's agent metrics, optionally for one folder and since a time."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.chat.metrics import agent_metrics_summary
from apps.core.openapi import error_response
from apps.library.access import folder_access


class LatencySerializer(serializers.Serializer):
    count = serializers.IntegerField()
    p50 = serializers.IntegerField(allow_null=True, help_text="Median time from start to saved answer, ms.")
    p95 = serializers.IntegerField(allow_null=True)


class LatencyByModeSerializer(serializers.Serializer):
    standard = LatencySerializer()
    agent = LatencySerializer()


class RewritesSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="rewrite_query calls.")
    succeeded = serializers.IntegerField(help_text="Rewrites whose next search in the run found passages.")
    success_rate = serializers.FloatField(allow_null=True)


class FallbackSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Agent runs that fell back to standard mode.")
    rate = serializers.FloatField(allow_null=True, help_text="Share of agent runs that fell back.")
    reasons = serializers.DictField(child=serializers.IntegerField(), help_text="Count per kind of reason.")


class TokensSerializer(serializers.Serializer):
    input = serializers.IntegerField(help_text="every input token sent, cached ones included")
    output = serializers.IntegerField()
    cache_write = serializers.IntegerField(help_text="of input, written to Anthropic's prompt cache (1.25x price)")
    cache_read = serializers.IntegerField(help_text="of input, read from Anthropic's prompt cache (0.1x price)")


class RatingsSerializer(serializers.Serializer):
    up = serializers.IntegerField()
    down = serializers.IntegerField()


class FeedbackSerializer(RatingsSerializer):
    by_mode = serializers.DictField(
        child=RatingsSerializer(), help_text="Per mode of the run that wrote the answer: standard, agent, ..."
    )


class AgentMetricsOutputSerializer(serializers.Serializer):
    runs = serializers.IntegerField(help_text="Finished runs counted (completed, failed and cancelled).")
    runs_by_mode = serializers.DictField(child=serializers.IntegerField())
    failed_runs = serializers.IntegerField()
    cancelled_runs = serializers.IntegerField(help_text="Runs their owner stopped.")
    latency_ms = LatencyByModeSerializer()
    average_iterations = serializers.FloatField(allow_null=True, help_text="Model turns per agent run.")
    tool_usage = serializers.DictField(child=serializers.IntegerField(), help_text="Calls per tool.")
    rewrites = RewritesSerializer()
    fallback = FallbackSerializer()
    tokens = TokensSerializer()
    feedback = FeedbackSerializer(help_text="Ratings of answers (`POST /api/messages/{id}/feedback`).")


class AgentMetricsApi(APIView):
    """Aggregates over the caller's finished runs: runs by mode, latency standard vs agent, average
    iterations, tool usage, rewrite success, fallback rate and reasons, tokens, ratings of answers by
    mode. Failed and cancelled runs count."""

    class FilterSerializer(serializers.Serializer):
        folder_id = serializers.IntegerField(required=False, min_value=1)
        since = serializers.DateTimeField(required=False, help_text="Only runs started at or after (ISO 8601).")

    @extend_schema(
        parameters=[FilterSerializer],
        responses={
            200: AgentMetricsOutputSerializer,
            404: error_response("`folder_id` names no folder of the caller's."),
        },
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        values = filters.validated_data
        folder_id = values.get("folder_id")
        if folder_id is not None:
            folder_access(user=request.user, folder_id=folder_id)  # another user's folder is a 404
        summary = agent_metrics_summary(owner_id=request.user.pk, folder_id=folder_id, since=values.get("since"))
        return Response(AgentMetricsOutputSerializer(summary).data)

"""`GET /api/metrics/queues`: Celery queue depth, oldest waiting task and live workers, for staff."""

from __future__ import annotations

from dataclasses import asdict

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.queue_metrics import queue_metrics_list
from apps.core.token_auth import TokenScopePermission


class QueueOutputSerializer(serializers.Serializer):
    name = serializers.CharField()
    depth = serializers.IntegerField(help_text="Tasks waiting (every priority), not those being run.")
    oldest_wait_seconds = serializers.FloatField(
        allow_null=True, help_text="How long the oldest waiting task has waited; null when none waits."
    )
    workers = serializers.ListField(child=serializers.CharField(), help_text="Live workers consuming the queue.")
    live_workers = serializers.IntegerField()


class QueueMetricsOutputSerializer(serializers.Serializer):
    queues = QueueOutputSerializer(many=True)


class StaffOnly(IsAdminUser):
    message = "Only staff may see the queues: they hold every user's work."


class QueueMetricsApi(APIView):
    """Every queue's depth, the age of its oldest waiting task and the live workers consuming it
    (they answer within a second). Staff only: the queues mix every user's work."""

    permission_classes = [StaffOnly, TokenScopePermission]

    @extend_schema(responses={200: QueueMetricsOutputSerializer})
    def get(self, request: Request) -> Response:
        queues = [{**asdict(queue), "live_workers": len(queue.workers)} for queue in queue_metrics_list()]
        return Response(QueueMetricsOutputSerializer({"queues": queues}).data)

from django.urls import path

from apps.core.auth_views import TokenObtainApi, TokenRevokeApi
from apps.core.queue_metrics_api import QueueMetricsApi

urlpatterns = [
    path("auth/token", TokenObtainApi.as_view(), name="auth-token"),
    path("auth/token/revoke", TokenRevokeApi.as_view(), name="auth-token-revoke"),
    path("metrics/queues", QueueMetricsApi.as_view(), name="queue-metrics"),
]

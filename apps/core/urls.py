from django.urls import path

from apps.core.auth_views import TokenObtainApi, TokenRevokeApi
from apps.core.queue_metrics_api import QueueMetricsApi
from apps.core.token_apis import TokenCollectionApi, TokenDetailApi

urlpatterns = [
    path("auth/token", TokenObtainApi.as_view(), name="auth-token"),
    path("auth/token/revoke", TokenRevokeApi.as_view(), name="auth-token-revoke"),
    path("tokens", TokenCollectionApi.as_view(), name="tokens"),
    path("tokens/<int:token_id>", TokenDetailApi.as_view(), name="token-detail"),
    path("metrics/queues", QueueMetricsApi.as_view(), name="queue-metrics"),
]

from django.urls import path

from apps.core.auth_views import TokenObtainApi, TokenRevokeApi

urlpatterns = [
    path("auth/token", TokenObtainApi.as_view(), name="auth-token"),
    path("auth/token/revoke", TokenRevokeApi.as_view(), name="auth-token-revoke"),
]

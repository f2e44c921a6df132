"""`GET /api/quota`: the caller's limits and what their own folders use of them."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.library.quotas import quota_limits, quota_usage


class QuotaAmountsSerializer(serializers.Serializer):
    folders = serializers.IntegerField(allow_null=True)
    files = serializers.IntegerField(allow_null=True)
    bytes = serializers.IntegerField(allow_null=True)
    chunks = serializers.IntegerField(allow_null=True)


class QuotaOutputSerializer(serializers.Serializer):
    limits = QuotaAmountsSerializer(help_text="Null: no limit.")
    used = QuotaAmountsSerializer(help_text="Over the folders the caller owns; files, bytes and chunks indexed.")


class QuotaApi(APIView):
    """The caller's quotas (folders, indexed files, bytes, chunks), counted over the folders they
    own: folders shared with them count for their owner."""

    @extend_schema(responses={200: QuotaOutputSerializer})
    def get(self, request: Request) -> Response:
        user_id = int(request.user.pk or 0)  # authenticated: the view requires it
        data = {"limits": quota_limits(user_id=user_id).as_dict(), "used": quota_usage(user_id=user_id).as_dict()}
        return Response(QuotaOutputSerializer(data).data)

"""GET /api/folders/{id}/sync-log: what each sync of a folder found, newest first."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api import paginated_response
from apps.core.openapi import PAGINATION_PARAMETERS, paginated
from apps.core.stored_message_field import StoredMessageField
from apps.library.access import folder_access
from apps.library.models import SyncLog
from apps.library.sync_selectors import sync_log_list


class SyncLogOutputSerializer(serializers.ModelSerializer[SyncLog]):
    error = StoredMessageField(source="error", help_text="Why the sync failed, in the caller's language.")

    class Meta:
        model = SyncLog
        fields = [
            "id",
            "mode",
            "summary",
            "added",
            "modified",
            "deleted",
            "moved",
            "api_calls",
            "duration_ms",
            "error",
            "created_at",
        ]


class FolderSyncLogApi(APIView):
    @extend_schema(parameters=PAGINATION_PARAMETERS, responses={200: paginated(SyncLogOutputSerializer)})
    def get(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id)
        return paginated_response(
            queryset=sync_log_list(folder=folder), serializer_class=SyncLogOutputSerializer, request=request, view=self
        )

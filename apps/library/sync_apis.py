"""GET /api/folders/{id}/sync-log: what each sync of a folder found, newest first."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api import Pagination
from apps.core.openapi import PAGINATION_PARAMETERS, paginated
from apps.library import selectors
from apps.library.models import SyncLog
from apps.library.sync_selectors import sync_log_list


class SyncLogOutputSerializer(serializers.ModelSerializer[SyncLog]):
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
        folder = selectors.folder_get(user=request.user, folder_id=folder_id)
        if folder is None:
            raise Http404("Folder not found.")
        paginator = Pagination()
        page = paginator.paginate_queryset(sync_log_list(folder=folder), request, view=self)
        return paginator.get_paginated_response(SyncLogOutputSerializer(page, many=True).data)

"""The search endpoint: validate, check the folder belongs to the user, call the selector."""

from __future__ import annotations

import time

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from apps.core.models import TokenScope
from apps.library.access import folder_access
from apps.search.selectors import K_MAX, chunk_search
from apps.search.types import SearchFilters, SearchMode


class SearchFiltersSerializer(serializers.Serializer):
    path_prefix = serializers.CharField(required=False, allow_blank=True, max_length=1024)
    mime_types = serializers.ListField(child=serializers.CharField(max_length=255), required=False, max_length=50)
    modified_after = serializers.DateTimeField(required=False)
    modified_before = serializers.DateTimeField(required=False)


class SearchHitSerializer(serializers.Serializer):
    chunk_id = serializers.IntegerField()
    file_id = serializers.IntegerField()
    file_name = serializers.CharField()
    path = serializers.CharField()
    text = serializers.CharField()
    location = serializers.DictField()
    vector_rank = serializers.IntegerField(allow_null=True)
    keyword_rank = serializers.IntegerField(allow_null=True)
    score = serializers.FloatField()
    distance = serializers.FloatField(allow_null=True)
    keyword_score = serializers.FloatField(allow_null=True)


class FolderSearchApi(APIView):
    required_scope = TokenScope.SEARCH

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "search"

    class SearchInputSerializer(serializers.Serializer):
        query = serializers.CharField(
            allow_blank=True, trim_whitespace=False, max_length=settings.SEARCH_MAX_QUERY_CHARS
        )
        k = serializers.IntegerField(min_value=1, max_value=K_MAX, default=10)
        mode = serializers.ChoiceField(choices=[mode.value for mode in SearchMode], default=SearchMode.HYBRID.value)
        filters = SearchFiltersSerializer(required=False)

    class SearchOutputSerializer(serializers.Serializer):
        results = SearchHitSerializer(many=True)
        took_ms = serializers.FloatField()
        words_matched = serializers.BooleanField(
            allow_null=True,
            help_text="Whether any passage holds the query's words (null in vector mode, which reads no "
            "words): false means the results are only the passages closest in meaning.",
        )

    @extend_schema(request=SearchInputSerializer, responses={200: SearchOutputSerializer})
    def post(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id)
        data = self.SearchInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        filters = values.get("filters") or {}
        started = time.perf_counter()
        hits = chunk_search(
            folder_id=folder.pk,
            query=values["query"],
            k=values["k"],
            mode=SearchMode(values["mode"]),
            filters=SearchFilters(
                path_prefix=filters.get("path_prefix") or None,
                mime_types=tuple(filters.get("mime_types") or ()),
                modified_after=filters.get("modified_after"),
                modified_before=filters.get("modified_before"),
            ),
        )
        took_ms = round((time.perf_counter() - started) * 1000, 1)
        words_matched = None if values["mode"] == SearchMode.VECTOR.value else any(hit.keyword_rank for hit in hits)
        body = {"results": hits, "took_ms": took_ms, "words_matched": words_matched}
        return Response(self.SearchOutputSerializer(body).data)

"""The document page's endpoints: a file's original bytes, and its chunks in document order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.http.response import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.pagination import PageNumberPagination
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from werkzeug.datastructures import MIMEAccept
from werkzeug.http import parse_accept_header

from apps.core.openapi import error_response, paginated
from apps.library import document_selectors
from apps.library.access import file_access
from apps.library.content_limits import ContentThrottle, download_slot_take
from apps.library.models import Chunk
from apps.library.ranged import original_response
from apps.llm.sources import describe_location


class _AnyAccept(DefaultContentNegotiation):
    """The content endpoint answers bytes whatever a viewer's Accept says (`image/*`, `application/pdf`):
    DRF's renderers (JSON) only format its errors, so an Accept they do not match is no 406."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> Any:
        renderers = list(renderers)
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            return renderers[0], renderers[0].media_type


# Where a browser shows an answer itself (Fetch's request destinations), rather than handing it to a
# script (`empty`: fetch, XHR) or decoding it as media (`image`, `video`).
_SHOWN_DESTINATIONS = frozenset({"document", "iframe", "frame", "embed", "object"})


def _is_navigation(request: Request) -> bool:
    """Whether a person will see this answer as a page. `Sec-Fetch-Dest` says so in every current
    browser, and a script cannot forge it; without it (older browsers, API clients) the Accept
    header decides, so `*/*` or none keeps JSON and only a preference for HTML gets the page."""
    destination = request.headers.get("Sec-Fetch-Dest")
    if destination:
        return destination in _SHOWN_DESTINATIONS
    accept = parse_accept_header(request.headers.get("Accept", ""), MIMEAccept)
    return accept.best_match(["application/json", "text/html"]) == "text/html"


class FileContentApi(APIView):
    content_negotiation_class = _AnyAccept
    throttle_classes = [ContentThrottle]
    throttle_scope = "content"

    @extend_schema(
        summary="The file's original bytes",
        description=(
            "Read from the folder's source now (a local folder: under its root, symlinks resolved, "
            "never outside it; Drive: with the folder's credentials, Docs Editors files exported as "
            "Office files). Inline for PDF and images, an attachment otherwise; `nosniff`, and a "
            "`Content-Security-Policy: sandbox` so that HTML or SVG never runs script here. "
            "Single `Range` requests are answered 206 (416 when unsatisfiable). A Drive file is "
            "fetched as it is sent, a range as Drive's own range; one larger than `CONTENT_MAX_BYTES` "
            "is not sent whole (413, with its Drive link: a small HTML page when a browser shows the answer "
            "itself, by `Sec-Fetch-Dest` or else an Accept preferring HTML) but its ranges are, each cut to "
            "that size."
        ),
        parameters=[OpenApiParameter("Range", OpenApiTypes.STR, OpenApiParameter.HEADER, required=False)],
        responses={
            (200, "*/*"): OpenApiResponse(OpenApiTypes.BINARY, description="The whole file."),
            (206, "*/*"): OpenApiResponse(OpenApiTypes.BINARY, description="The requested byte range."),
            403: error_response("The source refused the path (outside the folder, not a regular file)."),
            409: error_response("Google Drive must be reconnected."),
            (413, "application/json"): error_response(
                "A Drive file too large to send whole; `link` opens it in Drive (for a browser showing the "
                "answer itself, a page saying so and linking there)."
            ),
            (413, "text/html"): OpenApiResponse(OpenApiTypes.STR),
            416: error_response("The range lies outside the file."),
            503: error_response(
                "The source is unavailable, or this process has `CONTENT_MAX_CONCURRENT` Drive downloads "
                "in flight; `Retry-After` says when to try again."
            ),
        },
    )
    def get(self, request: Request, file_id: int) -> HttpResponseBase:
        file = file_access(user=request.user, file_id=file_id)
        slot = download_slot_take(file=file)
        try:
            original = document_selectors.file_original_open(file=file)
            return original_response(
                original=original,
                range_header=request.headers.get("Range"),
                on_close=slot.release,
                navigation=_is_navigation(request),
            )
        except BaseException:
            slot.release()
            raise


class ChunkOutputSerializer(serializers.ModelSerializer[Chunk]):
    location_label = serializers.SerializerMethodField(
        help_text="The location in words: page 3, cells A1:C9, at 0:42 (a recording)."
    )

    class Meta:
        model = Chunk
        fields = ["id", "chunk_index", "text", "location", "location_label", "token_count"]

    def get_location_label(self, chunk: Chunk) -> str:
        return describe_location(chunk.location or {})


class ChunkPagination(PageNumberPagination):
    page_size = document_selectors.CHUNKS_PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = 200


class FileChunksApi(APIView):
    @extend_schema(
        summary="The file's extracted text, chunk by chunk in document order, with locations",
        parameters=[
            OpenApiParameter("page", OpenApiTypes.INT, description="1-based page of chunks."),
            OpenApiParameter("page_size", OpenApiTypes.INT, description="Chunks per page (default 50, at most 200)."),
        ],
        responses={200: paginated(ChunkOutputSerializer)},
    )
    def get(self, request: Request, file_id: int) -> Response:
        file = file_access(user=request.user, file_id=file_id)
        paginator = ChunkPagination()
        page = paginator.paginate_queryset(document_selectors.file_chunks(file=file), request, view=self)
        return paginator.get_paginated_response(ChunkOutputSerializer(page, many=True).data)

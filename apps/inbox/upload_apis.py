"""POST /api/inbox/files: a file uploaded into a folder's inbox/ (multipart: folder_id, file)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http.multipartparser import MultiPartParser as DjangoMultiPartParser
from django.http.multipartparser import MultiPartParserError
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api import ApplicationError
from apps.core.openapi import error_response
from apps.inbox.upload import UploadTooLargeError, inbox_file_save, upload_name_clean
from apps.library.access import FolderAction, folder_access

# The form around the file (boundaries, folder_id, headers) on top of the file's own bytes.
_FORM_OVERHEAD_BYTES = 64 * 1024


class _NamesAsSent(DjangoMultiPartParser):
    """Django quietly cuts a file name down to its last path segment (``../x.pdf`` -> ``x.pdf``);
    an upload named with a path is refused instead, so the sender learns it was not as named."""

    def sanitize_file_name(self, file_name: str) -> str | None:
        sanitized = super().sanitize_file_name(file_name)
        try:
            upload_name_clean(name=file_name)
        except ApplicationError as exc:
            raise MultiPartParserError(exc.message) from exc
        return sanitized


class InboxUploadParser(MultiPartParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> DataAndFiles:
        request = (parser_context or {})["request"]
        meta = {**request.META, "CONTENT_TYPE": media_type}
        try:
            data, files = _NamesAsSent(meta, stream, request.upload_handlers, settings.DEFAULT_CHARSET).parse()
        except MultiPartParserError as exc:
            raise ParseError(str(exc)) from exc
        return DataAndFiles(data, files)


class SavedFileOutputSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="Where it was saved: inbox/<name>, or inbox/<name (2)> when taken.")
    name = serializers.CharField()
    renamed = serializers.BooleanField(help_text="The name was taken, so the file got a number.")
    mime_type = serializers.CharField(help_text="The type read from the content.")
    size = serializers.IntegerField()
    file_id = serializers.IntegerField(allow_null=True, help_text="Its index entry; null when excluded.")


class InboxFileUploadApi(APIView):
    """Upload a file into a folder's inbox/ (editors and the owner). It is indexed right away and
    gets its organization suggestion like any new inbox file. 413 over INBOX_UPLOAD_MAX_BYTES,
    415 for a type the index cannot read or a name that says another type, 400 for a bad name;
    nothing is written then. A taken name is kept: the upload becomes "name (2).ext"."""

    parser_classes = [InboxUploadParser]

    class InputSerializer(serializers.Serializer):
        folder_id = serializers.IntegerField(min_value=1)
        file = serializers.FileField(allow_empty_file=False)

    @extend_schema(
        request={"multipart/form-data": InputSerializer},
        responses={
            201: SavedFileOutputSerializer,
            403: error_response("A viewer of the folder."),
            404: error_response("No such folder of the caller's."),
            413: error_response("Larger than INBOX_UPLOAD_MAX_BYTES."),
            415: error_response("A type the index cannot read, or a name that says another type."),
        },
    )
    def post(self, request: Request) -> Response:
        limit = settings.INBOX_UPLOAD_MAX_BYTES
        if int(request.META.get("CONTENT_LENGTH") or 0) > limit + _FORM_OVERHEAD_BYTES:
            raise UploadTooLargeError(f"Uploads may be at most {limit:,} bytes (INBOX_UPLOAD_MAX_BYTES).")
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        folder = folder_access(user=request.user, folder_id=data.validated_data["folder_id"], action=FolderAction.EDIT)
        upload = data.validated_data["file"]
        name = upload.name or ""
        saved = inbox_file_save(folder=folder, name=name, content=upload, size=upload.size or 0)
        output = {
            "path": saved.path,
            "name": saved.path.rsplit("/", 1)[-1],
            "renamed": saved.path.rsplit("/", 1)[-1] != name.strip(),
            "mime_type": saved.mime_type,
            "size": saved.size,
            "file_id": saved.file_id,
        }
        return Response(SavedFileOutputSerializer(output).data, status=status.HTTP_201_CREATED)

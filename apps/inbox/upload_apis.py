"""POST /api/inbox/files?folder_id=: a file uploaded into a folder's inbox/ (multipart: file).

The folder comes in the query string so that access is checked before one byte of the body is
parsed; the form field folder_id is still accepted without it, checked once the form is read.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest, QueryDict
from django.http.multipartparser import MultiPartParser as DjangoMultiPartParser
from django.http.multipartparser import MultiPartParserError
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api import ApplicationError
from apps.core.body_cap import FORM_OVERHEAD_BYTES
from apps.core.openapi import error_response
from apps.core.token_auth import PersonalTokenAuthentication
from apps.inbox.upload import UploadTooLargeError, inbox_file_save, upload_name_clean
from apps.library.access import FolderAction, folder_access


def _too_large() -> UploadTooLargeError:
    limit = settings.INBOX_UPLOAD_MAX_BYTES
    return UploadTooLargeError(f"Uploads may be at most {limit:,} bytes (INBOX_UPLOAD_MAX_BYTES).")


class _UploadCap(FileUploadHandler):
    """First of the upload handlers: counts a file's bytes as they stream in and refuses the
    upload once they pass the cap, before the handlers after it spool the rest to disk."""

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        if start + len(raw_data) > settings.INBOX_UPLOAD_MAX_BYTES:
            raise _too_large()
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


class _HeaderCsrfSessionAuthentication(SessionAuthentication):
    """Django's CSRF check looks for the token in the form first, which would parse the whole
    upload during authentication; here it sees an empty form, so the token must come in the
    X-CSRFToken header (as the web page sends it) and the body stays unread."""

    def enforce_csrf(self, request: Any) -> None:
        super().enforce_csrf(_FormUnread(request._request))  # type: ignore[arg-type]  # duck-typed: only POST differs


class _FormUnread:
    def __init__(self, request: HttpRequest) -> None:
        self._request = request
        self.POST = QueryDict()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._request, name)


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
        handlers = [_UploadCap(request), *request.upload_handlers]
        try:
            data, files = _NamesAsSent(meta, stream, handlers, settings.DEFAULT_CHARSET).parse()
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
    authentication_classes = [PersonalTokenAuthentication, _HeaderCsrfSessionAuthentication]

    class QuerySerializer(serializers.Serializer):
        folder_id = serializers.IntegerField(min_value=1, required=False)

    class InputSerializer(serializers.Serializer):
        folder_id = serializers.IntegerField(
            min_value=1, required=False, help_text="Only without ?folder_id= (checked after the body is read)."
        )
        file = serializers.FileField(allow_empty_file=False)

    @extend_schema(
        parameters=[QuerySerializer],
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
        query = self.QuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        folder_id = query.validated_data.get("folder_id")
        # Before request.data: a stranger or a viewer is refused with the body never parsed.
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.EDIT) if folder_id else None
        if int(request.META.get("CONTENT_LENGTH") or 0) > settings.INBOX_UPLOAD_MAX_BYTES + FORM_OVERHEAD_BYTES:
            raise _too_large()
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if folder is None:
            if "folder_id" not in data.validated_data:
                raise ApplicationError(_("Say which folder: ?folder_id= in the URL."))
            folder_id = data.validated_data["folder_id"]
            folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.EDIT)
        elif data.validated_data.get("folder_id", folder_id) != folder_id:
            raise ApplicationError(_("folder_id in the URL and in the form differ."))
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

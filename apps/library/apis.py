"""REST endpoints for folders and files. Views validate, call a service or selector, serialize."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api import ApplicationError, Pagination
from apps.core.openapi import PAGINATION_PARAMETERS, error_response, paginated
from apps.core.stored_message_field import StoredMessageField
from apps.core.tokens import token_folder_limit
from apps.library import selectors, services
from apps.library.access import FolderAction, FolderPermissionDenied, file_access, folder_access, folders_visible
from apps.library.exclusions import MAX_PATTERN_CHARS, ExcludePatternError, exclude_patterns_clean
from apps.library.language import SEARCH_LANGUAGES
from apps.library.models import File, FileStatus, Folder, SourceKind
from apps.library.paging import COUNT_CAP, CappedCountPagination
from apps.library.sync_apis import SyncLogOutputSerializer
from apps.library.sync_selectors import sync_log_list, sync_logs_newest


class FolderOutputSerializer(serializers.ModelSerializer[Folder]):
    role = serializers.CharField(
        source="caller_role", default="owner", help_text="The caller's role: owner, editor, viewer."
    )
    owner = serializers.CharField(source="owner.username", read_only=True)
    last_error = StoredMessageField(
        source="last_error", help_text="Why the last sync failed, in the caller's language."
    )
    last_sync = serializers.SerializerMethodField(
        help_text="What the newest sync found (GET /api/folders/{id}/sync-log's first entry), or null."
    )
    _sync_log_serializer: SyncLogOutputSerializer | None = None

    class Meta:
        model = Folder
        fields = [
            "id",
            "name",
            "source",
            "external_id",
            "status",
            "files_total",
            "files_indexed",
            "last_synced_at",
            "sync_interval_seconds",
            "last_error",
            "exclude_patterns",
            "language",
            "created_at",
            "role",
            "owner",
            "last_sync",
        ]

    @extend_schema_field(SyncLogOutputSerializer(allow_null=True))
    def get_last_sync(self, folder: Folder) -> dict[str, Any] | None:
        # A list passes every folder's newest in its context (one statement); alone, one query.
        newest = self.context.get("last_syncs")
        log = newest.get(folder.pk) if newest is not None else sync_log_list(folder=folder).first()
        if log is None:
            return None
        # One serializer for the whole list: building a model serializer's fields took 1 ms a folder.
        if self._sync_log_serializer is None:
            self._sync_log_serializer = SyncLogOutputSerializer(context=self.context)
        return self._sync_log_serializer.to_representation(log)


class FolderDetailOutputSerializer(FolderOutputSerializer):
    working_on = serializers.SerializerMethodField(help_text="Files a worker is indexing now, and since when.")
    events_after = serializers.CharField(
        help_text="Follow GET /api/folders/{id}/events from here (Last-Event-ID): later events change this state."
    )

    class Meta(FolderOutputSerializer.Meta):
        fields = [*FolderOutputSerializer.Meta.fields, "working_on", "events_after"]

    def get_working_on(self, folder: Folder) -> list[dict[str, Any]]:
        return [
            {"path": path, "started_at": started}
            for path, started in selectors.folder_files_in_progress(folder_id=folder.pk)
        ]


class FileOutputSerializer(serializers.ModelSerializer[File]):
    error = StoredMessageField(
        source="error", help_text="Why the file was skipped or failed, in the caller's language."
    )

    class Meta:
        model = File
        fields = [
            "id",
            "folder_id",
            "path",
            "name",
            "mime_type",
            "size",
            "modified_time",
            "status",
            "error",
            "chunk_count",
            "indexed_at",
            "index_started_at",
            "digest",
        ]


class ExcludePatternsField(serializers.CharField):
    """Gitignore patterns, one per line; a pattern that does not parse is a 400 naming its line."""

    def __init__(self) -> None:
        help_text = "Paths never indexed, one gitignore pattern per line; omitted: the defaults."
        super().__init__(
            required=False, allow_blank=True, trim_whitespace=False, max_length=MAX_PATTERN_CHARS, help_text=help_text
        )

    def to_internal_value(self, data: Any) -> str:
        try:
            return exclude_patterns_clean(text=super().to_internal_value(data))
        except ExcludePatternError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class FolderCollectionApi(APIView):
    class FolderCreateInputSerializer(serializers.Serializer):
        # The stubs type Field.source as the attribute path; here it is just a field named "source".
        source = serializers.ChoiceField(choices=SourceKind.choices)  # type: ignore[assignment]
        path = serializers.CharField(required=False, max_length=1024, help_text="Local directory (source=local)")
        drive_folder_id = serializers.CharField(required=False, max_length=256, help_text="source=drive")
        name = serializers.CharField(required=False, max_length=255, allow_blank=True)
        exclude_patterns = ExcludePatternsField()

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if attrs["source"] == SourceKind.LOCAL and not attrs.get("path"):
                raise serializers.ValidationError({"path": _("Required for a local folder.")})
            if attrs["source"] == SourceKind.DRIVE and not attrs.get("drive_folder_id"):
                raise serializers.ValidationError({"drive_folder_id": _("Required for a Drive folder.")})
            return attrs

    @extend_schema(parameters=PAGINATION_PARAMETERS, responses={200: paginated(FolderOutputSerializer)})
    def get(self, request: Request) -> Response:
        paginator = Pagination()
        folders = paginator.paginate_queryset(
            folders_visible(user=request.user).select_related("owner").order_by("-created_at"), request, view=self
        )
        context = {"last_syncs": sync_logs_newest(folder_ids=[folder.pk for folder in folders or []])}
        return paginator.get_paginated_response(FolderOutputSerializer(folders, many=True, context=context).data)

    @extend_schema(
        request=FolderCreateInputSerializer,
        responses={201: FolderOutputSerializer, 409: error_response("This folder is already connected.")},
    )
    def post(self, request: Request) -> Response:
        if token_folder_limit(user=request.user) is not None:
            # The new folder would be outside the token's reach the moment it was made.
            raise FolderPermissionDenied(_("This API token is limited to some folders: it cannot connect new ones."))
        data = self.FolderCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        folder = services.folder_create(
            owner=request.user,  # type: ignore[arg-type]
            source=values["source"],
            external_id=values.get("path") or values.get("drive_folder_id", ""),
            name=values.get("name", ""),
            exclude_patterns=values.get("exclude_patterns"),
        )
        folder.refresh_from_db()
        return Response(FolderOutputSerializer(folder).data, status=status.HTTP_201_CREATED)


class FolderDetailApi(APIView):
    class FolderUpdateInputSerializer(serializers.Serializer):
        name = serializers.CharField(required=False, max_length=255)
        exclude_patterns = ExcludePatternsField()
        sync_interval_seconds = serializers.IntegerField(
            required=False,
            min_value=services.SYNC_INTERVAL_MIN_SECONDS,
            max_value=services.SYNC_INTERVAL_MAX_SECONDS,
            help_text="How often the folder is checked for changes (beat looks every minute).",
        )
        language = serializers.ChoiceField(
            choices=SEARCH_LANGUAGES,
            required=False,
            help_text="How keyword search stems and filters the folder's words (a PostgreSQL text search "
            "configuration; simple keeps words as written). Changing it re-indexes the keyword vectors.",
        )

    @extend_schema(responses={200: FolderDetailOutputSerializer})
    def get(self, request: Request, folder_id: int) -> Response:
        # Read before the folder: every event after it is at least as new as the state returned.
        after = selectors.folder_events_position(folder_id=folder_id)
        folder = folder_access(user=request.user, folder_id=folder_id)
        folder.events_after = after  # type: ignore[attr-defined]
        return Response(FolderDetailOutputSerializer(folder).data)

    @extend_schema(request=FolderUpdateInputSerializer, responses={200: FolderOutputSerializer})
    def patch(self, request: Request, folder_id: int) -> Response:
        data = self.FolderUpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # Renaming is the owner's; exclude patterns, the sync interval and the language are an editor's.
        action = FolderAction.MANAGE if "name" in data.validated_data else FolderAction.EDIT
        folder = folder_access(user=request.user, folder_id=folder_id, action=action)
        folder = services.folder_update(folder=folder, **data.validated_data)
        return Response(FolderOutputSerializer(folder).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.MANAGE)
        services.folder_delete(folder=folder, actor=request.user)  # type: ignore[arg-type]
        return Response(status=status.HTTP_204_NO_CONTENT)


class FolderFilesApi(APIView):
    class FilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=FileStatus.choices, required=False)
        path_prefix = serializers.CharField(required=False, max_length=1024)
        type = serializers.CharField(
            required=False,
            max_length=255,
            help_text='An extension ("pdf"), a MIME type ("application/pdf") or a MIME prefix ("image/").',
        )
        name = serializers.CharField(required=False, max_length=255, help_text="Part of the file name, any case.")
        ordering = serializers.ChoiceField(
            choices=[f"{sign}{key}" for key in selectors.FILE_ORDERINGS for sign in ("", "-")],
            required=False,
            default="path",
            help_text='Sort key, "-" in front for descending; ties by path.',
        )

    class FilePageOutputSerializer(paginated(FileOutputSerializer)):  # type: ignore[misc]
        count_exact = serializers.BooleanField(
            help_text=f"False when more files match than were counted: `count` is then a lower bound "
            f"(counting stops past {COUNT_CAP} or the requested page, whichever is further)."
        )

    @extend_schema(parameters=[FilterSerializer, *PAGINATION_PARAMETERS], responses={200: FilePageOutputSerializer})
    def get(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        values = filters.validated_data
        files = selectors.file_list(
            folder=folder,
            status=values.get("status"),
            path_prefix=values.get("path_prefix"),
            file_type=values.get("type"),
            name=values.get("name"),
            ordering=values["ordering"],
        )
        paginator = CappedCountPagination()
        page = paginator.paginate_queryset(files, request, view=self)
        return paginator.get_paginated_response(FileOutputSerializer(page, many=True).data)


class FolderReindexApi(APIView):
    @extend_schema(request=None, responses={202: FolderOutputSerializer})
    def post(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.EDIT)
        services.folder_index_enqueue(folder=folder)
        folder.refresh_from_db()
        return Response(FolderOutputSerializer(folder).data, status=status.HTTP_202_ACCEPTED)


class FolderSyncApi(APIView):
    @extend_schema(request=None, responses={202: FolderOutputSerializer})
    def post(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.EDIT)
        if folder.status == "needs_reauth":
            raise ApplicationError(_("Reconnect Google Drive before syncing this folder."))
        services.folder_sync_enqueue(folder=folder)
        return Response(FolderOutputSerializer(folder).data, status=status.HTTP_202_ACCEPTED)


class FileDetailApi(APIView):
    @extend_schema(responses={200: FileOutputSerializer})
    def get(self, request: Request, file_id: int) -> Response:
        file = file_access(user=request.user, file_id=file_id)
        return Response(FileOutputSerializer(file).data)


class FolderFilesRetryApi(APIView):
    """Index failed files again: the ones named, or every failed file of the folder."""

    class RetryInputSerializer(serializers.Serializer):
        file_ids = serializers.ListField(
            child=serializers.IntegerField(min_value=1),
            required=False,
            max_length=1000,
            help_text="Failed or skipped files of this folder; omitted: every failed file.",
        )

    class RetryOutputSerializer(serializers.Serializer):
        retried = serializers.ListField(child=serializers.IntegerField())
        folder = FolderOutputSerializer()

    @extend_schema(request=RetryInputSerializer, responses={202: RetryOutputSerializer})
    def post(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.EDIT)
        data = self.RetryInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        retried = services.files_retry(folder=folder, file_ids=data.validated_data.get("file_ids"))
        if not retried:
            raise ApplicationError(_("There is no failed or skipped file to retry."))
        folder.refresh_from_db()
        body = {"retried": retried, "folder": folder}
        return Response(self.RetryOutputSerializer(body).data, status=status.HTTP_202_ACCEPTED)


class FileRetryApi(APIView):
    @extend_schema(request=None, responses={202: FileOutputSerializer})
    def post(self, request: Request, file_id: int) -> Response:
        file = file_access(user=request.user, file_id=file_id, action=FolderAction.EDIT)
        if file.status not in services.RETRYABLE:
            raise ApplicationError(
                _("%(path)s is %(status)s; only failed or skipped files can be retried.")
                % {"path": file.path, "status": str(file.get_status_display()).lower()}
            )
        services.files_retry(folder=file.folder, file_ids=[file.pk])
        file.refresh_from_db()
        return Response(FileOutputSerializer(file).data, status=status.HTTP_202_ACCEPTED)

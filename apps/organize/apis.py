"""REST endpoints of organizing: suggestions and responses, on-demand suggesting, moves, settings."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotAuthenticated
from rest_framework.fields import empty
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.chat.serializers import InboxMessageOutputSerializer
from apps.core.api import ApplicationError, paginated_response
from apps.core.openapi import PAGINATION_PARAMETERS, error_response, paginated
from apps.library.access import FolderAction, folder_access
from apps.organize import bulk, decisions, proposals, selectors, services
from apps.organize.models import DecisionAction, SuggestionStatus
from apps.organize.paths import file_path_clean, folder_path_clean
from apps.organize.serializers import (
    AcceptAllOutputSerializer,
    FolderTreeOutputSerializer,
    MoveOutputSerializer,
    OrganizeOutputSerializer,
    RespondOutputSerializer,
    SettingsOutputSerializer,
    SuggestionOutputSerializer,
)

MAX_FOLDER_LIST = 100
MAX_ACCEPT_ALL = 500
TREE_DEPTH = 32


def _owner_id(request: Request) -> int:
    # Every view here requires authentication (the default permission class).
    if request.user.pk is None:
        raise NotAuthenticated()
    return int(request.user.pk)


def _checked(clean: Any, value: str, field: str) -> str:
    """A path cleaner's refusal as a field error (400 with the reason)."""
    try:
        return str(clean(value, field=field))
    except ApplicationError as exc:
        raise serializers.ValidationError(exc.message) from exc


class StatusesField(serializers.MultipleChoiceField):
    """Several statuses, as seed 002 writes them (`?status=pending,accepted`) or repeated
    (`?status=pending&status=accepted`), or both; an unknown one is a 400 naming it. Left empty
    (`?status=`), the filter is off, as DRF treats any empty query parameter."""

    def get_value(self, dictionary: Any) -> Any:
        if self.field_name not in dictionary:
            return empty
        values = (
            dictionary.getlist(self.field_name) if hasattr(dictionary, "getlist") else [dictionary[self.field_name]]
        )
        parts = [part.strip() for value in values for part in str(value).split(",") if part.strip()]
        return parts or empty


class SuggestionListApi(APIView):
    class FilterSerializer(serializers.Serializer):
        status = StatusesField(
            choices=SuggestionStatus.choices,
            required=False,
            help_text="Any of these statuses: `pending,accepted`, or the parameter repeated.",
        )
        folder_id = serializers.IntegerField(required=False, min_value=1)

    @extend_schema(
        parameters=[FilterSerializer, *PAGINATION_PARAMETERS], responses={200: paginated(SuggestionOutputSerializer)}
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        suggestions = selectors.suggestion_list(
            user=request.user,
            statuses=sorted(filters.validated_data.get("status", ())),
            folder_id=filters.validated_data.get("folder_id"),
        )
        return paginated_response(
            queryset=suggestions, serializer_class=SuggestionOutputSerializer, request=request, view=self
        )


class SuggestionRespondApi(APIView):
    """accept: move to the suggested folder; choose: move to `target_folder`; reject: keep it.

    Moves happen at the source and in the index (chunks kept). 409 when the file changed, moved or
    vanished since, or the destination is taken: nothing is changed then.
    """

    class RespondInputSerializer(serializers.Serializer):
        action = serializers.ChoiceField(choices=DecisionAction.choices)
        target_folder = serializers.CharField(required=False, max_length=1024, trim_whitespace=False)

        def validate_target_folder(self, value: str) -> str:
            return _checked(folder_path_clean, value, "target_folder")

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            choosing = attrs["action"] == DecisionAction.CHOOSE
            if choosing and not attrs.get("target_folder"):
                raise serializers.ValidationError({"target_folder": _("Required when the action is choose.")})
            if not choosing and "target_folder" in attrs:
                raise serializers.ValidationError({"target_folder": _("Only used when the action is choose.")})
            return attrs

    @extend_schema(
        request=RespondInputSerializer,
        responses={
            200: RespondOutputSerializer,
            409: error_response("The file changed, moved or vanished since, or the destination is taken."),
        },
    )
    def post(self, request: Request, suggestion_id: int) -> Response:
        visible = selectors.suggestion_get(user=request.user, suggestion_id=suggestion_id)
        if visible is None:
            raise Http404(_("Suggestion not found."))
        data = self.RespondInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        outcome = decisions.suggestion_respond(
            suggestion_id=suggestion_id,
            owner_id=visible.owner_id,
            actor=request.user,  # type: ignore[arg-type]
            action=data.validated_data["action"],
            target_folder=data.validated_data.get("target_folder"),
        )
        suggestion = selectors.suggestion_get(user=request.user, suggestion_id=suggestion_id)
        body = {"suggestion": suggestion, "move": outcome.move, "message": outcome.message}
        return Response(RespondOutputSerializer(body).data)


class SuggestionAcceptAllApi(APIView):
    """Accept every pending suggestion at or above `min_confidence` (of one folder, or all the
    caller may organize). Each moves on its own: one that cannot (the file changed, the place is
    taken) is listed under `failed` with why, and the others still move."""

    class AcceptAllInputSerializer(serializers.Serializer):
        min_confidence = serializers.FloatField(min_value=0.0, max_value=1.0)
        folder_id = serializers.IntegerField(required=False, min_value=1)

    @extend_schema(
        request=AcceptAllInputSerializer,
        responses={200: AcceptAllOutputSerializer, 404: error_response("No such folder of the caller's.")},
    )
    def post(self, request: Request) -> Response:
        data = self.AcceptAllInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        folder_id = data.validated_data.get("folder_id")
        if folder_id is not None:
            folder_access(user=request.user, folder_id=folder_id, action=FolderAction.EDIT)
        suggestions = selectors.suggestion_list(
            user=request.user, statuses=[SuggestionStatus.PENDING], folder_id=folder_id
        ).filter(confidence__gte=data.validated_data["min_confidence"])
        outcome = bulk.suggestions_accept(
            suggestions=list(suggestions[:MAX_ACCEPT_ALL]),
            actor=request.user,  # type: ignore[arg-type]
        )
        return Response(AcceptAllOutputSerializer(outcome).data)


class FolderTreeApi(APIView):
    """The folders a file of this folder may be moved to, with their file counts; `q` keeps those
    whose path contains it (any case)."""

    class FilterSerializer(serializers.Serializer):
        q = serializers.CharField(required=False, allow_blank=True, max_length=200)

    @extend_schema(parameters=[FilterSerializer], responses={200: FolderTreeOutputSerializer})
    def get(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.EDIT)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        folders = selectors.move_targets(folder_id=folder.pk, query=filters.validated_data.get("q", ""))
        return Response(FolderTreeOutputSerializer({"folder_id": folder.pk, "folders": folders}).data)


class OrganizeApi(APIView):
    """Suggest folders now for `paths` (default: every file under inbox/) of one folder."""

    class OrganizeInputSerializer(serializers.Serializer):
        folder_id = serializers.IntegerField(min_value=1)
        paths = serializers.ListField(
            child=serializers.CharField(max_length=1024, trim_whitespace=False),
            required=False,
            allow_empty=False,
            max_length=services.ON_DEMAND_MAX_FILES,
        )
        force = serializers.BooleanField(required=False, default=False)

        def validate_paths(self, value: list[str]) -> list[str]:
            return [_checked(file_path_clean, path, "paths") for path in value]

    @extend_schema(
        request=OrganizeInputSerializer,
        responses={200: OrganizeOutputSerializer, 404: error_response("No such folder of the caller's.")},
    )
    def post(self, request: Request) -> Response:
        data = self.OrganizeInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        folder = folder_access(user=request.user, folder_id=data.validated_data["folder_id"], action=FolderAction.EDIT)
        outcomes = services.files_suggest(
            folder=folder, paths=data.validated_data.get("paths"), force=data.validated_data["force"]
        )
        body = {
            "suggestions": [outcome.suggestion for outcome in outcomes if outcome.suggestion and not outcome.skipped],
            "skipped": [{"path": outcome.path, "reason": outcome.skipped} for outcome in outcomes if outcome.skipped],
        }
        return Response(OrganizeOutputSerializer(body).data)


class MoveListApi(APIView):
    class FilterSerializer(serializers.Serializer):
        folder_id = serializers.IntegerField(required=False, min_value=1)

    @extend_schema(
        parameters=[FilterSerializer, *PAGINATION_PARAMETERS], responses={200: paginated(MoveOutputSerializer)}
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        moves = selectors.move_list(user=request.user, **filters.validated_data)
        return paginated_response(queryset=moves, serializer_class=MoveOutputSerializer, request=request, view=self)


class MoveUndoApi(APIView):
    """Put the file back. 409 if it moved again since or its old place is taken."""

    @extend_schema(
        request=None,
        responses={
            200: MoveOutputSerializer,
            409: error_response("The file moved again since, or its old place is taken."),
        },
    )
    def post(self, request: Request, move_id: int) -> Response:
        visible = selectors.move_get(user=request.user, move_id=move_id)
        if visible is None:
            raise Http404(_("Move not found."))
        move = decisions.move_undo(
            move_id=move_id,
            owner_id=visible.owner_id,
            actor=request.user,  # type: ignore[arg-type]
        )
        return Response(MoveOutputSerializer(move).data, status=status.HTTP_200_OK)


class OrganizationSettingsApi(APIView):
    """The user's organization settings. PUT changes the fields it is given."""

    class SettingsInputSerializer(serializers.Serializer):
        auto_suggest = serializers.BooleanField(required=False)
        suggest_threshold = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)
        auto_move = serializers.BooleanField(required=False)
        auto_move_threshold = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)
        include_folders = serializers.ListField(
            child=serializers.CharField(max_length=1024, trim_whitespace=False),
            required=False,
            max_length=MAX_FOLDER_LIST,
        )
        exclude_folders = serializers.ListField(
            child=serializers.CharField(max_length=1024, trim_whitespace=False),
            required=False,
            max_length=MAX_FOLDER_LIST,
        )

        def validate_include_folders(self, value: list[str]) -> list[str]:
            return [_checked(folder_path_clean, path, "include_folders") for path in value]

        def validate_exclude_folders(self, value: list[str]) -> list[str]:
            return [_checked(folder_path_clean, path, "exclude_folders") for path in value]

    @extend_schema(responses={200: SettingsOutputSerializer})
    def get(self, request: Request) -> Response:
        return Response(SettingsOutputSerializer(selectors.organization_settings_get(owner_id=_owner_id(request))).data)

    @extend_schema(request=SettingsInputSerializer, responses={200: SettingsOutputSerializer})
    def put(self, request: Request) -> Response:
        data = self.SettingsInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        preferences = services.organization_settings_update(
            owner_id=_owner_id(request), values=dict(data.validated_data)
        )
        return Response(SettingsOutputSerializer(preferences).data)


class GuidelineProposalRespondApi(APIView):
    """Answer "Shall I remember that?": `remember` appends the proposed line to the folder's
    guideline.md (through its source: local or Drive) and later suggestions follow it; `decline`
    leaves the file alone. 409 when already answered or the file cannot be written."""

    class ProposalInputSerializer(serializers.Serializer):
        action = serializers.ChoiceField(choices=["remember", "decline"])

    class ProposalOutputSerializer(serializers.Serializer):
        proposal = InboxMessageOutputSerializer()
        message = InboxMessageOutputSerializer()

    @extend_schema(
        request=ProposalInputSerializer,
        responses={
            200: ProposalOutputSerializer,
            409: error_response("Already answered, or guideline.md could not be read or written."),
        },
    )
    def post(self, request: Request, message_id: int) -> Response:
        folder_id = proposals.guideline_proposal_folder_id(message_id=message_id)
        if folder_id is None:
            raise Http404(_("Proposal not found."))
        try:
            folder_access(user=request.user, folder_id=folder_id, action=FolderAction.EDIT)
        except Http404:
            raise Http404(_("Proposal not found.")) from None
        data = self.ProposalInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        proposal, message = proposals.guideline_proposal_respond(
            message_id=message_id, remember=data.validated_data["action"] == "remember"
        )
        return Response(self.ProposalOutputSerializer({"proposal": proposal, "message": message}).data)

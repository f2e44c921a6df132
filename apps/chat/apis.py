"""REST endpoints for chat. Views validate, call a service or selector, serialize."""

from __future__ import annotations

import uuid

from django.http import Http404, HttpResponseBase
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from apps.chat import controls, selectors, services
from apps.chat.attachments import images_check
from apps.chat.continuation import answer_continue_start
from apps.chat.events import STEP_DOC
from apps.chat.models import Conversation, ConversationStatus, FeedbackRating
from apps.chat.serializers import (
    MAX_MESSAGE_CHARS,
    ChatAcceptedOutputSerializer,
    ConversationDetailOutputSerializer,
    ConversationOutputSerializer,
    ConversationPageOutputSerializer,
    FeedbackOutputSerializer,
    MessagePageInputSerializer,
    RunOutputSerializer,
    events_url,
)
from apps.chat.streaming import EventStreamRenderer, run_streamed
from apps.core.api import paginated_response
from apps.core.models import TokenScope
from apps.core.openapi import PAGINATION_PARAMETERS, error_response, paginated
from apps.core.preferences import request_language
from apps.library.access import folder_access
from apps.llm.model_choice import model_allowed, models_allowed

MAX_FEEDBACK_CHARS = 2000


def _conversation_or_404(request: Request, conversation_id: int) -> Conversation:
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    if conversation is None:
        raise Http404(_("Conversation not found."))
    return conversation


class FolderChatApi(APIView):
    """Ask a folder a question. `Accept: text/event-stream` streams the run's events in the response;
    otherwise the run is queued and its events are on `events_url`."""

    required_scope = TokenScope.CHAT

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "chat"
    renderer_classes = [JSONRenderer, EventStreamRenderer]

    class ChatInputSerializer(serializers.Serializer):
        message = serializers.CharField(max_length=MAX_MESSAGE_CHARS)
        conversation_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)
        agent_mode = serializers.BooleanField(required=False, default=False)
        max_iterations = serializers.IntegerField(
            required=False,
            allow_null=True,
            min_value=1,
            help_text="Agent mode: at most this many rounds of tool calls (capped by AGENT_MAX_ITERATIONS).",
        )
        model = serializers.CharField(
            required=False, max_length=100, help_text="The model for this run's calls: one of LLM_MODELS_ALLOWED."
        )
        images = serializers.ListField(
            child=serializers.FileField(allow_empty_file=True),
            required=False,
            default=list,
            help_text=(
                "multipart/form-data only, the field repeated: up to CHAT_MAX_IMAGES images (PNG, JPEG, WebP, "
                "GIF or HEIC by content), each at most CHAT_IMAGE_MAX_BYTES. Their text (OCR) and the vision "
                "model's description are sources the answer cites; they are kept with the question."
            ),
        )

        def validate_model(self, value: str) -> str:
            if not model_allowed(value):
                raise serializers.ValidationError(
                    _("Not an allowed model; choose one of: %(models)s.") % {"models": ", ".join(models_allowed())}
                )
            return value

    @extend_schema(
        request={"application/json": ChatInputSerializer, "multipart/form-data": ChatInputSerializer},
        responses={
            (202, "application/json"): ChatAcceptedOutputSerializer,
            (200, "text/event-stream"): OpenApiResponse(OpenApiTypes.STR, description=STEP_DOC),
            400: error_response("Invalid input, or an image too many, too large or of another type."),
            409: error_response("The conversation is archived."),
        },
    )
    def post(self, request: Request, folder_id: int) -> HttpResponseBase:
        folder = folder_access(user=request.user, folder_id=folder_id)
        data = self.ChatInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        conversation = None
        if values.get("conversation_id") is not None:
            conversation = _conversation_or_404(request, values["conversation_id"])
            if conversation.folder_id != folder.pk:
                raise Http404(_("Conversation not found."))
        images = images_check(uploads=values["images"])  # all refused or all kept: nothing saved yet
        run = services.chat_start(
            user=request.user,  # type: ignore[arg-type]
            folder=folder,
            text=values["message"],
            conversation=conversation,
            agent_mode=values["agent_mode"],
            max_iterations=values.get("max_iterations"),
            model=values.get("model", ""),
            images=images,
            language=request_language(user_id=request.user.pk),
        )
        if request.accepted_renderer.format == EventStreamRenderer.format:
            return run_streamed(run)
        services.run_enqueue(run=run)
        body = {"run_id": run.pk, "conversation_id": run.conversation_id, "events_url": events_url(run)}
        return Response(ChatAcceptedOutputSerializer(body).data, status=status.HTTP_202_ACCEPTED)


class ConversationListApi(APIView):
    class ConversationFilterSerializer(serializers.Serializer):
        folder_id = serializers.IntegerField(required=False, min_value=1)
        status = serializers.ChoiceField(choices=ConversationStatus.choices, required=False)

    @extend_schema(
        parameters=[ConversationFilterSerializer, *PAGINATION_PARAMETERS],
        responses={200: paginated(ConversationOutputSerializer)},
    )
    def get(self, request: Request) -> Response:
        filters = self.ConversationFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        conversations = selectors.conversation_list(user=request.user, **filters.validated_data)
        return paginated_response(
            queryset=conversations, serializer_class=ConversationOutputSerializer, request=request, view=self
        )


class ConversationDetailApi(APIView):
    required_scope = {"PATCH": TokenScope.CHAT, "DELETE": TokenScope.CHAT}

    class ConversationRenameInputSerializer(serializers.Serializer):
        title = serializers.CharField(max_length=255)

    @extend_schema(
        parameters=[MessagePageInputSerializer],
        responses={200: ConversationPageOutputSerializer},
        description="Every message; with `limit` or `cursor`, one page of them and its `next_cursor`.",
    )
    def get(self, request: Request, conversation_id: int) -> Response:
        conversation = _conversation_or_404(request, conversation_id)  # someone else's: 404 before 400
        paging = MessagePageInputSerializer(data=request.query_params)
        paging.is_valid(raise_exception=True)
        paged = paging.validated_data["paged"]
        page = selectors.conversation_message_page(
            user=request.user,
            conversation=conversation,
            limit=paging.validated_data["limit"] if paged else None,
            before=paging.validated_data["before"],
        )
        present = selectors.cited_file_ids_present(conversation=conversation, messages=page.messages)
        context = {"present_file_ids": present, "messages": page.messages, "next_cursor": page.next_cursor}
        output = ConversationPageOutputSerializer if paged else ConversationDetailOutputSerializer
        return Response(output(conversation, context=context).data)

    @extend_schema(request=ConversationRenameInputSerializer, responses={200: ConversationOutputSerializer})
    def patch(self, request: Request, conversation_id: int) -> Response:
        conversation = _conversation_or_404(request, conversation_id)  # someone else's: 404 before 400
        data = self.ConversationRenameInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        conversation = controls.conversation_rename(conversation=conversation, title=data.validated_data["title"])
        return Response(ConversationOutputSerializer(conversation).data)

    @extend_schema(responses={204: None, 409: error_response("An answer is still being written in it.")})
    def delete(self, request: Request, conversation_id: int) -> Response:
        controls.conversation_delete(conversation=_conversation_or_404(request, conversation_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ConversationRegenerateApi(APIView):
    """Answer the conversation's last question again, in the same mode, as a new run."""

    required_scope = TokenScope.CHAT

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "chat"

    @extend_schema(
        request=None,
        responses={
            202: ChatAcceptedOutputSerializer,
            409: error_response("No answer yet, one still being written, or the conversation is archived."),
        },
    )
    def post(self, request: Request, conversation_id: int) -> Response:
        conversation = _conversation_or_404(request, conversation_id)
        folder_access(user=request.user, folder_id=conversation.live_folder_id)  # removed or no longer shared: 404
        run = controls.conversation_regenerate(user=request.user, conversation=conversation)  # type: ignore[arg-type]
        services.run_enqueue(run=run)
        body = {"run_id": run.pk, "conversation_id": run.conversation_id, "events_url": events_url(run)}
        return Response(ChatAcceptedOutputSerializer(body).data, status=status.HTTP_202_ACCEPTED)


class ConversationArchiveApi(APIView):
    required_scope = TokenScope.CHAT

    @extend_schema(request=None, responses={200: ConversationOutputSerializer})
    def post(self, request: Request, conversation_id: int) -> Response:
        conversation = services.conversation_archive(conversation=_conversation_or_404(request, conversation_id))
        return Response(ConversationOutputSerializer(conversation).data)


class RunDetailApi(APIView):
    required_scope = TokenScope.CHAT

    @extend_schema(responses={200: RunOutputSerializer})
    def get(self, request: Request, run_id: uuid.UUID) -> Response:
        run = selectors.run_get(user=request.user, run_id=run_id)
        if run is None:
            raise Http404(_("Run not found."))
        return Response(RunOutputSerializer(run).data)


class RunCancelApi(APIView):
    """Stop a run. A queued run ends at once; a running one at its next text chunk or tool
    boundary, keeping the text written so far. Either way its stream ends with `done` whose
    `status` is `cancelled` (unless the run finished first)."""

    required_scope = TokenScope.CHAT

    @extend_schema(
        request=None,
        responses={202: RunOutputSerializer, 409: error_response("The run has already finished.")},
    )
    def post(self, request: Request, run_id: uuid.UUID) -> Response:
        run = selectors.run_get(user=request.user, run_id=run_id)
        if run is None:
            raise Http404(_("Run not found."))
        run = controls.run_cancel(run=run)
        return Response(RunOutputSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class MessageFeedbackApi(APIView):
    """Rate an answer of one of your conversations; rating it again replaces the earlier rating."""

    required_scope = TokenScope.CHAT

    class FeedbackInputSerializer(serializers.Serializer):
        rating = serializers.ChoiceField(choices=FeedbackRating.choices)
        comment = serializers.CharField(max_length=MAX_FEEDBACK_CHARS, required=False, allow_blank=True, default="")

    @extend_schema(
        request=FeedbackInputSerializer,
        responses={200: FeedbackOutputSerializer, 400: error_response("Not an answer, or invalid input.")},
    )
    def post(self, request: Request, message_id: int) -> Response:
        message = selectors.message_get(user=request.user, message_id=message_id)
        if message is None:
            raise Http404(_("Message not found."))
        data = self.FeedbackInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        feedback = controls.message_feedback_set(
            user=request.user,  # type: ignore[arg-type]
            message=message,
            rating=data.validated_data["rating"],
            comment=data.validated_data["comment"],
        )
        return Response(FeedbackOutputSerializer(feedback).data)


class AnswerContinueApi(APIView):
    """Continue an answer the model cut short (`metadata.truncated`): a new run completes the same
    message, streaming only the new text on `events_url`."""

    required_scope = TokenScope.CHAT

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "chat"

    @extend_schema(
        request=None,
        responses={
            202: ChatAcceptedOutputSerializer,
            400: error_response("The answer was not cut short."),
            409: error_response("The conversation is archived, or the answer is already being continued."),
        },
    )
    def post(self, request: Request, message_id: int) -> Response:
        message = selectors.answer_get(user=request.user, message_id=message_id)
        if message is None:
            raise Http404(_("Message not found."))
        folder_access(user=request.user, folder_id=message.conversation.live_folder_id)  # still allowed to ask it
        run = answer_continue_start(user=request.user, message=message)  # type: ignore[arg-type]
        services.run_enqueue(run=run)
        body = {"run_id": run.pk, "conversation_id": run.conversation_id, "events_url": events_url(run)}
        return Response(ChatAcceptedOutputSerializer(body).data, status=status.HTTP_202_ACCEPTED)

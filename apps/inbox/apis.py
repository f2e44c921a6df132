"""REST endpoints of inbox conversations (routed under /api/inbox/ by apps.organize.urls)."""

from __future__ import annotations

from typing import Any

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

from apps.chat.events import STEP_DOC
from apps.chat.models import AgentRun, Conversation, ConversationStatus
from apps.chat.selectors import cited_files_present
from apps.chat.serializers import MAX_MESSAGE_CHARS, MessagePageInputSerializer, events_url
from apps.chat.services import conversation_archive, run_enqueue
from apps.chat.streaming import EventStreamRenderer, run_streamed
from apps.core.api import Pagination
from apps.core.models import TokenScope
from apps.core.openapi import PAGINATION_PARAMETERS, error_response, paginated
from apps.core.preferences import request_language
from apps.inbox import selectors
from apps.inbox.serializers import (
    InboxConversationOutputSerializer,
    InboxConversationPageOutputSerializer,
    InboxRunAcceptedOutputSerializer,
    UnsuggestedFileOutputSerializer,
)
from apps.inbox.services import inbox_conversation_start, inbox_message_post
from apps.library.access import FolderAction, folder_access

DETAIL_MESSAGES = 200


def _conversation_or_404(request: Request, conversation_id: int) -> Conversation:
    conversation = selectors.inbox_conversation_get(user=request.user, conversation_id=conversation_id)
    if conversation is None:
        raise Http404(_("Conversation not found."))
    return conversation


def _run_response(request: Request, *, conversation: Conversation, run: AgentRun) -> HttpResponseBase:
    """Stream the run in this response (`Accept: text/event-stream`) or queue it: 202 + events URL."""
    if request.accepted_renderer.format == EventStreamRenderer.format:
        return run_streamed(run)
    run_enqueue(run=run)
    conversation = _conversation_or_404(request, conversation.pk)
    messages = selectors.conversation_messages(conversation_id=conversation.pk, limit=selectors.LIST_MESSAGES)
    present = cited_files_present(conversations=[conversation], messages=messages)
    body: dict[str, Any] = {
        "conversation": conversation,
        "run_id": run.pk,
        "message_id": run.question_id,
        "events_url": events_url(run),
    }
    output = InboxRunAcceptedOutputSerializer(body, context={"messages": messages, "present_file_ids": present})
    return Response(output.data, status=status.HTTP_202_ACCEPTED)


class InboxConversationCollectionApi(APIView):
    """List inbox conversations; POST gets the folder's current one (continued within 30 minutes,
    otherwise new), and with a `message` also sends it: 202, events at `events_url` (to stream a
    message in the response, post it to the conversation's messages)."""

    required_scope = {"POST": TokenScope.CHAT}

    throttle_scope = "chat"

    class FilterSerializer(serializers.Serializer):
        folder_id = serializers.IntegerField(required=False, min_value=1)
        status = serializers.ChoiceField(choices=ConversationStatus.choices, required=False)

    class StartInputSerializer(serializers.Serializer):
        folder_id = serializers.IntegerField(min_value=1)
        message = serializers.CharField(required=False, max_length=MAX_MESSAGE_CHARS)

    def get_throttles(self) -> list[Any]:
        return [ScopedRateThrottle()] if self.request.method == "POST" else []

    @extend_schema(
        parameters=[FilterSerializer, *PAGINATION_PARAMETERS],
        responses={200: paginated(InboxConversationOutputSerializer)},
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        conversations = selectors.inbox_conversation_list(user=request.user, **filters.validated_data)
        paginator = Pagination()
        page = paginator.paginate_queryset(conversations, request, view=self) or []
        # One look-up of the cited files for the whole page, not one per conversation.
        latest = [message for conversation in page for message in getattr(conversation, "latest", [])]
        present = cited_files_present(conversations=page, messages=latest)
        output = InboxConversationOutputSerializer(page, many=True, context={"present_file_ids": present})
        return paginator.get_paginated_response(output.data)

    @extend_schema(
        request=StartInputSerializer,
        responses={
            200: InboxConversationOutputSerializer,
            202: InboxRunAcceptedOutputSerializer,
            404: error_response("No such folder of the caller's."),
        },
    )
    def post(self, request: Request) -> HttpResponseBase:
        data = self.StartInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        folder = folder_access(
            # The inbox conversation is the owner's (suggestions and moves are filed in their name).
            user=request.user,
            folder_id=data.validated_data["folder_id"],
            action=FolderAction.MANAGE,
        )
        conversation, run = inbox_conversation_start(
            folder=folder, text=data.validated_data.get("message"), language=request_language(user_id=request.user.pk)
        )
        if run is not None:
            return _run_response(request, conversation=conversation, run=run)
        return Response(InboxConversationOutputSerializer(_conversation_or_404(request, conversation.pk)).data)


class InboxConversationDetailApi(APIView):
    @extend_schema(
        parameters=[MessagePageInputSerializer],
        responses={200: InboxConversationPageOutputSerializer},
        description=(
            f"The latest {DETAIL_MESSAGES} messages; with `limit` or `cursor` (seed 002's `?limit=`), "
            "one page of them and its `next_cursor`."
        ),
    )
    def get(self, request: Request, conversation_id: int) -> Response:
        conversation = _conversation_or_404(request, conversation_id)  # someone else's: 404 before 400
        paging = MessagePageInputSerializer(data=request.query_params)
        paging.is_valid(raise_exception=True)
        paged = paging.validated_data["paged"]
        page = selectors.conversation_message_page(
            conversation_id=conversation.pk,
            limit=paging.validated_data["limit"] if paged else DETAIL_MESSAGES,
            before=paging.validated_data["before"],
        )
        present = cited_files_present(conversations=[conversation], messages=page.messages)
        context = {"messages": page.messages, "present_file_ids": present, "next_cursor": page.next_cursor}
        output = InboxConversationPageOutputSerializer if paged else InboxConversationOutputSerializer
        return Response(output(conversation, context=context).data)


class InboxMessageCreateApi(APIView):
    """Send a message: the router picks query, organize, save, confirm, reject or chat.

    `{"message": "..."}`, or the seed's `{"type": "text", "content": {"text": "..."}}`.
    `Accept: text/event-stream` streams tool_call, tool_result, text_delta, message and done events
    in the response; otherwise 202 with the run id, run on the agent queue, events at `events_url`.
    """

    required_scope = TokenScope.CHAT

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "chat"
    renderer_classes = [JSONRenderer, EventStreamRenderer]

    class MessageInputSerializer(serializers.Serializer):
        message = serializers.CharField(required=False, max_length=MAX_MESSAGE_CHARS)
        type = serializers.ChoiceField(choices=["text"], required=False, default="text")
        content = serializers.DictField(required=False)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            text = attrs.get("message")
            if text is None:
                raw = (attrs.get("content") or {}).get("text")
                text = raw.strip() if isinstance(raw, str) else ""
            if not text:
                raise serializers.ValidationError({"message": _("Send the text as message or content.text.")})
            if len(text) > MAX_MESSAGE_CHARS:
                raise serializers.ValidationError(
                    {"message": _("At most %(limit)s characters.") % {"limit": MAX_MESSAGE_CHARS}}
                )
            return {"text": text}

    @extend_schema(
        request=MessageInputSerializer,
        responses={
            (202, "application/json"): InboxRunAcceptedOutputSerializer,
            (200, "text/event-stream"): OpenApiResponse(OpenApiTypes.STR, description=STEP_DOC),
            409: error_response("The conversation is archived."),
        },
    )
    def post(self, request: Request, conversation_id: int) -> HttpResponseBase:
        conversation = _conversation_or_404(request, conversation_id)
        data = self.MessageInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = inbox_message_post(
            conversation=conversation,
            text=data.validated_data["text"],
            language=request_language(user_id=request.user.pk),
        )
        return _run_response(request, conversation=conversation, run=run)


class InboxConversationArchiveApi(APIView):
    required_scope = TokenScope.CHAT

    @extend_schema(request=None, responses={200: InboxConversationOutputSerializer})
    def post(self, request: Request, conversation_id: int) -> Response:
        conversation = conversation_archive(conversation=_conversation_or_404(request, conversation_id))
        return Response(InboxConversationOutputSerializer(conversation).data)


class InboxUnsuggestedFileListApi(APIView):
    """Inbox files of every folder the caller organizes that have no pending suggestion (under the
    threshold, automatic suggestions off, or kept in the inbox), newest first, each with the
    reason: the page offers "Suggest a folder" for them (POST /api/inbox/organize)."""

    @extend_schema(responses={200: UnsuggestedFileOutputSerializer(many=True)})
    def get(self, request: Request) -> Response:
        files = selectors.inbox_files_unsuggested(user=request.user, limit=selectors.UNSUGGESTED_SHOWN)
        return Response(UnsuggestedFileOutputSerializer(files, many=True).data)

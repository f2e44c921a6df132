"""Output shapes shared by the chat endpoints (inputs live on their views)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from apps.chat.messages import message_text
from apps.chat.models import AgentRun, Conversation, Message

# The longest question or inbox message accepted, in characters.
MAX_MESSAGE_CHARS = 8000


def events_url(run: AgentRun) -> str:
    return reverse("run-events", kwargs={"run_id": run.pk})


class MessageOutputSerializer(serializers.ModelSerializer[Message]):
    """`metadata` of an answer may hold `truncated` (continue it), `notice` and `fallback_reason`
    (plain sentences: the model was unavailable and the offline answerer answered)."""

    text = serializers.SerializerMethodField()
    citations = serializers.SerializerMethodField()
    sources_consulted = serializers.SerializerMethodField()

    class Meta:
        model = Message
        fields = ["id", "role", "type", "text", "citations", "sources_consulted", "metadata", "created_at"]

    def get_text(self, message: Message) -> str:
        return str(message.content.get("text", ""))

    def get_citations(self, message: Message) -> list[dict[str, Any]]:
        return list(message.content.get("citations", []))

    def get_sources_consulted(self, message: Message) -> list[dict[str, Any]]:
        """The passages an answer citing none of them was written from."""
        return list(message.content.get("sources_consulted", []))


class ConversationOutputSerializer(serializers.ModelSerializer[Conversation]):
    message_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Conversation
        fields = ["id", "folder_id", "title", "status", "message_count", "created_at", "last_activity_at"]


class ConversationDetailOutputSerializer(ConversationOutputSerializer):
    messages = MessageOutputSerializer(many=True, read_only=True)

    class Meta(ConversationOutputSerializer.Meta):
        fields = [*ConversationOutputSerializer.Meta.fields, "messages"]


class RunOutputSerializer(serializers.ModelSerializer[AgentRun]):
    events_url = serializers.SerializerMethodField()

    class Meta:
        model = AgentRun
        fields = [
            "id",
            "conversation_id",
            "mode",
            "status",
            "question_id",
            "answer_id",
            "iterations",
            "metrics",
            "fallback_reason",
            "created_at",
            "started_at",
            "finished_at",
            "events_url",
        ]

    def get_events_url(self, run: AgentRun) -> str:
        return events_url(run)


class ChatAcceptedOutputSerializer(serializers.Serializer):
    run_id = serializers.UUIDField()
    conversation_id = serializers.IntegerField()
    events_url = serializers.CharField()


class InboxMessageOutputSerializer(serializers.ModelSerializer[Message]):
    """Every type with its seed 002 `content`, plus `text`: a one-line reading of any type."""

    text = serializers.SerializerMethodField()

    class Meta:
        model = Message
        fields = ["id", "role", "type", "text", "content", "metadata", "created_at"]

    def get_text(self, message: Message) -> str:
        return message_text(message)

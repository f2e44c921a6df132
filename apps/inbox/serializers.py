"""Output shapes of the inbox conversation endpoints (inputs live on their views)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.chat.models import Conversation
from apps.chat.serializers import InboxMessageOutputSerializer, NextCursorField


class InboxConversationOutputSerializer(serializers.ModelSerializer[Conversation]):
    """Context: `messages` (a detail's, else the list's prefetched `latest`) and `present_file_ids`,
    the files they cite that still exist (`cited_files_present`)."""

    message_count = serializers.IntegerField(read_only=True)
    messages = serializers.SerializerMethodField()

    class Meta:
        model = Conversation
        fields = [
            "id",
            "folder_id",
            "title",
            "status",
            "summary",
            "message_count",
            "created_at",
            "last_activity_at",
            "messages",
        ]

    def get_messages(self, conversation: Conversation) -> list[dict[str, Any]]:
        """Oldest first: the latest messages prefetched for a list, or those the view loaded."""
        messages = getattr(conversation, "latest", None)
        if messages is None:
            messages = self.context.get("messages", [])
        ordered = sorted(messages, key=lambda message: (message.created_at, message.pk))
        present = self.context.get("present_file_ids")
        context = {} if present is None else {"present_file_ids": present}
        return list(InboxMessageOutputSerializer(ordered, many=True, context=context).data)


class InboxConversationPageOutputSerializer(InboxConversationOutputSerializer):
    """A paged detail (`limit` or `cursor` given): `messages` is the page. Context: also `next_cursor`."""

    next_cursor = NextCursorField()

    class Meta(InboxConversationOutputSerializer.Meta):
        fields = [*InboxConversationOutputSerializer.Meta.fields, "next_cursor"]


class InboxRunAcceptedOutputSerializer(serializers.Serializer):
    conversation = InboxConversationOutputSerializer()
    run_id = serializers.UUIDField()
    message_id = serializers.IntegerField()
    events_url = serializers.CharField()


class UnsuggestedFileOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    folder_id = serializers.IntegerField()
    folder_name = serializers.CharField()
    path = serializers.CharField()
    name = serializers.CharField()
    reason = serializers.CharField(help_text="Why no suggestion is waiting for this file.")

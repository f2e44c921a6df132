"""Output shapes shared by the chat endpoints (inputs live on their views)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.chat.messages import message_text
from apps.chat.models import AgentRun, Conversation, Message, MessageAttachment, MessageFeedback
from apps.chat.selectors import MessageCursor, cited_file_ids_present

# The longest question or inbox message accepted, in characters.
MAX_MESSAGE_CHARS = 8000
# A page of a conversation's messages (`limit`): seed 002's example asks for 50.
MESSAGE_PAGE_DEFAULT = 50
MESSAGE_PAGE_MAX = 200


def sources_marked(*, sources: list[dict[str, Any]], present_file_ids: set[int]) -> list[dict[str, Any]]:
    """Each cited source with `source_removed`: its file, or its whole folder, is gone since (an
    image attached to the question stays while its conversation does)."""
    return [
        {
            **source,
            "source_removed": source.get("attachment_id") is None and source.get("file_id") not in present_file_ids,
        }
        for source in sources
    ]


def events_url(run: AgentRun) -> str:
    return reverse("run-events", kwargs={"run_id": run.pk})


def attachment_url(attachment: MessageAttachment) -> str:
    return reverse("attachment-content", kwargs={"attachment_id": attachment.pk})


class FeedbackOutputSerializer(serializers.ModelSerializer[MessageFeedback]):
    class Meta:
        model = MessageFeedback
        fields = ["message_id", "rating", "comment", "created_at", "updated_at"]


class StepOutputSerializer(serializers.Serializer):
    """One tool call of the run that wrote the answer, with the fields of its `tool_result` event."""

    call_id = serializers.CharField()
    tool_name = serializers.CharField()
    tool_input = serializers.JSONField()
    tool_output = serializers.CharField(help_text="A one-line summary of what the tool returned.")
    status = serializers.ChoiceField(choices=["complete", "error"])
    duration_ms = serializers.IntegerField(allow_null=True)
    iteration = serializers.IntegerField(allow_null=True)
    reasoning = serializers.CharField(required=False, help_text="The model's text before the call, if any.")


class CitationOutputSerializer(serializers.Serializer):
    n = serializers.IntegerField()
    file_id = serializers.IntegerField(allow_null=True, help_text="Null for an image attached to the question.")
    file_name = serializers.CharField()
    path = serializers.CharField()
    location = serializers.CharField()
    chunk_id = serializers.IntegerField(allow_null=True)
    snippet = serializers.CharField(help_text="The passage's opening: it finds the passage again after a re-index.")
    source_removed = serializers.BooleanField(help_text="The file (or its whole folder) was removed since.")
    attachment_id = serializers.IntegerField(
        allow_null=True, required=False, help_text="An image attached to the question (its `attachments` entry)."
    )


class AttachmentOutputSerializer(serializers.ModelSerializer[MessageAttachment]):
    url = serializers.SerializerMethodField(help_text="The image itself, for its conversation's owner.")

    class Meta:
        model = MessageAttachment
        fields = ["id", "position", "name", "mime_type", "size", "url"]

    def get_url(self, attachment: MessageAttachment) -> str:
        return attachment_url(attachment)


class MessageOutputSerializer(serializers.ModelSerializer[Message]):
    """`metadata` of an answer may hold `truncated` (continue it), `notice` and `fallback_reason`
    (plain sentences: the model was unavailable and the offline answerer answered).

    Context: `present_file_ids`, the cited files that still exist (`cited_file_ids_present`)."""

    text = serializers.SerializerMethodField()
    citations = serializers.SerializerMethodField()
    steps = serializers.SerializerMethodField()
    feedback = serializers.SerializerMethodField()
    sources_consulted = serializers.SerializerMethodField()
    attachments = AttachmentOutputSerializer(
        many=True, read_only=True, help_text="A question's images (prefetched without their bytes)."
    )

    class Meta:
        model = Message
        fields = [
            "id",
            "role",
            "type",
            "text",
            "attachments",
            "citations",
            "sources_consulted",
            "steps",
            "feedback",
            "metadata",
            "created_at",
        ]

    def get_text(self, message: Message) -> str:
        return str(message.content.get("text", ""))

    @extend_schema_field(CitationOutputSerializer(many=True))
    def get_citations(self, message: Message) -> list[dict[str, Any]]:
        return self._marked(message.content.get("citations", []))

    @extend_schema_field(StepOutputSerializer(many=True))
    def get_steps(self, message: Message) -> list[dict[str, Any]]:
        return list(message.content.get("steps", []))

    @extend_schema_field(FeedbackOutputSerializer(allow_null=True))
    def get_feedback(self, message: Message) -> dict[str, Any] | None:
        """The asker's rating; only present when the selector prefetched it (`my_feedback`)."""
        mine = getattr(message, "my_feedback", None)
        return FeedbackOutputSerializer(mine[0]).data if mine else None

    @extend_schema_field(CitationOutputSerializer(many=True))
    def get_sources_consulted(self, message: Message) -> list[dict[str, Any]]:
        """The passages an answer citing none of them was written from."""
        return self._marked(message.content.get("sources_consulted", []))

    def _marked(self, sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sources_marked(sources=sources, present_file_ids=self.context["present_file_ids"])


class ConversationOutputSerializer(serializers.ModelSerializer[Conversation]):
    """`folder_id` is null once the folder was removed (`folder_removed`); `folder_name` is then
    its name at removal (empty while the folder exists)."""

    message_count = serializers.IntegerField(read_only=True)
    folder_removed = serializers.SerializerMethodField()

    class Meta:
        model = Conversation
        fields = [
            "id",
            "folder_id",
            "folder_removed",
            "folder_name",
            "title",
            "status",
            "message_count",
            "created_at",
            "last_activity_at",
        ]

    def get_folder_removed(self, conversation: Conversation) -> bool:
        return conversation.folder_id is None


class ConversationDetailOutputSerializer(ConversationOutputSerializer):
    """Context: `messages` (`conversation_message_page`), oldest first, and their `present_file_ids`."""

    messages = serializers.SerializerMethodField()

    class Meta(ConversationOutputSerializer.Meta):
        fields = [*ConversationOutputSerializer.Meta.fields, "messages"]

    @extend_schema_field(MessageOutputSerializer(many=True))
    def get_messages(self, conversation: Conversation) -> list[dict[str, Any]]:
        return list(MessageOutputSerializer(self.context["messages"], many=True, context=self.context).data)


class MessagePageInputSerializer(serializers.Serializer):
    """The query of a paged conversation detail (chat and inbox alike); shared, as the page is."""

    limit = serializers.IntegerField(
        required=False, min_value=1, max_value=MESSAGE_PAGE_MAX, help_text="Messages per page, the latest first."
    )
    cursor = serializers.CharField(required=False, help_text="A page's `next_cursor`: the messages before that page.")

    def validate_cursor(self, value: str) -> MessageCursor:
        try:
            return MessageCursor.decode(value)
        except ValueError as exc:
            raise serializers.ValidationError(_("Not a cursor this endpoint gave; use a page's next_cursor.")) from exc

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """`paged`: either was given; `before`: the decoded cursor."""
        return {
            "paged": bool(attrs),
            "limit": attrs.get("limit", MESSAGE_PAGE_DEFAULT),
            "before": attrs.get("cursor"),
        }


@extend_schema_field({"type": "string", "nullable": True})
class NextCursorField(serializers.Field):
    """A paged detail's `next_cursor` (the context's): the cursor of the page of older messages;
    null: none older. Not read-only, so the schema marks it optional: an unpaged detail has none."""

    def __init__(self) -> None:
        super().__init__(
            source="*",
            required=False,
            help_text="The cursor of the page of older messages; null: none older. Only in a paged response.",
        )

    def to_representation(self, value: Any) -> str | None:
        return self.context["next_cursor"]


class ConversationPageOutputSerializer(ConversationDetailOutputSerializer):
    """A paged detail (`limit` or `cursor` given): `messages` is the page. Context: also `next_cursor`."""

    next_cursor = NextCursorField()

    class Meta(ConversationDetailOutputSerializer.Meta):
        fields = [*ConversationDetailOutputSerializer.Meta.fields, "next_cursor"]


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
            "max_iterations",
            "model",
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
    """Every type with its seed 002 `content`, plus `text`: a one-line reading of any type, and an
    answer's `citations` and `sources_consulted` marked as the chat's are (`source_removed`).

    Context: `present_file_ids` (`cited_files_present`) for a list; a message serialized alone
    without it looks up its own cited files."""

    text = serializers.SerializerMethodField()
    citations = serializers.SerializerMethodField()
    sources_consulted = serializers.SerializerMethodField()

    class Meta:
        model = Message
        fields = ["id", "role", "type", "text", "content", "citations", "sources_consulted", "metadata", "created_at"]

    def get_text(self, message: Message) -> str:
        return message_text(message)

    @extend_schema_field(CitationOutputSerializer(many=True))
    def get_citations(self, message: Message) -> list[dict[str, Any]]:
        return self._marked(message, (message.content or {}).get("citations", []))

    @extend_schema_field(CitationOutputSerializer(many=True))
    def get_sources_consulted(self, message: Message) -> list[dict[str, Any]]:
        return self._marked(message, (message.content or {}).get("sources_consulted", []))

    def _marked(self, message: Message, sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not sources:
            return []
        present = self.context.get("present_file_ids")
        if present is None:
            present = cited_file_ids_present(conversation=message.conversation, messages=[message])
        return sources_marked(sources=sources, present_file_ids=present)

"""Conversations with a folder, their messages, and the runs (standard or agent) that answer."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, QuerySet
from django.http import Http404

from apps.core.models import TimestampedModel
from apps.library.models import File, Folder


class ConversationKind(models.TextChoices):
    CHAT = "chat", "Folder chat"
    INBOX = "inbox", "Inbox assistant"
    # A question of an evaluation run (apps.evaluation): answered like a chat, listed in no sidebar.
    EVALUATION = "eval", "Evaluation question"


class ConversationStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    COMPLETED = "completed", "Completed"
    ARCHIVED = "archived", "Archived"


def _keep_the_owners_conversations(collector: Any, field: Any, sub_objs: QuerySet[Conversation], using: str) -> None:
    """A removed folder's owner keeps their conversations to read (the folder unset, its name kept);
    the members' go with the folder, since removing it ends their access just as a revoke does."""
    owners = sub_objs.filter(owner_id=F("folder__owner_id"))
    names = Folder.objects.filter(pk__in=owners.values("folder_id")).values_list("pk", "name")
    name_field = Conversation._meta.get_field("folder_name")
    # Field updates run in the deletion's transaction, before the folder's row goes.
    for folder_id, name in names:
        collector.add_field_update(name_field, name, owners.filter(folder_id=folder_id))
    models.SET_NULL(collector, field, owners, using)
    models.CASCADE(collector, field, sub_objs.exclude(owner_id=F("folder__owner_id")), using)


class Conversation(TimestampedModel):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    # Null: the folder was removed, and this is its owner's conversation, kept read-only.
    folder = models.ForeignKey(
        Folder, on_delete=_keep_the_owners_conversations, null=True, related_name="conversations"
    )
    folder_name = models.CharField(max_length=255, blank=True, help_text="The folder's name when it was removed.")
    kind = models.CharField(max_length=8, choices=ConversationKind.choices, default=ConversationKind.CHAT)
    status = models.CharField(max_length=16, choices=ConversationStatus.choices, default=ConversationStatus.ACTIVE)
    title = models.CharField(max_length=255, blank=True)
    summary = models.TextField(blank=True, help_text="The turns older than the prompt's budget, summarised.")
    summary_through = models.BigIntegerField(null=True, blank=True, help_text="The last message the summary covers.")
    last_activity_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "kind", "status", "-last_activity_at"])]

    def __str__(self) -> str:
        return self.title or f"Conversation {self.pk}"

    @property
    def live_folder_id(self) -> int:
        """The folder that runs, questions and moves of this conversation work in.

        A removed folder's kept conversations are read-only: `run_execute` and the endpoints that
        start runs refuse them first, so reaching this without a folder answers 404 (or fails the run).
        """
        if self.folder_id is None:
            raise ConversationFolderRemoved("This conversation's folder was removed.")
        return self.folder_id

    @property
    def live_folder(self) -> Folder:
        self.live_folder_id  # noqa: B018  (raises for a removed folder)
        return self.folder  # type: ignore[return-value]  # set: live_folder_id checked it


class ConversationFolderRemoved(Http404):
    pass


class MessageRole(models.TextChoices):
    USER = "user", "User"
    AGENT = "agent", "Agent"
    SYSTEM = "system", "System"
    TOOL = "tool", "Tool"


class MessageType(models.TextChoices):
    TEXT = "text", "Text"
    FILE = "file", "File"
    SEARCH_RESULT = "search_result", "Search result"
    SUGGESTION = "suggestion", "Suggestion"
    ACTION_RESULT = "action_result", "Action result"
    SUMMARY = "summary", "Summary"
    CLARIFICATION = "clarification", "Clarification"


class Message(TimestampedModel):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=8, choices=MessageRole.choices)
    type = models.CharField(max_length=16, choices=MessageType.choices, default=MessageType.TEXT)
    content = models.JSONField(default=dict, help_text='{"text": ..., "citations": [...], ...}')
    metadata = models.JSONField(default=dict, blank=True, help_text="model, tokens, timing, intent")

    class Meta:
        ordering = ["created_at", "id"]


class MessageAttachment(TimestampedModel):
    """An image sent with a question (`apps.chat.attachments`), kept with it.

    The bytes are a database column: PostgreSQL is the one store every web process and worker
    shares (no media volume is), a message's images go with it in the same transaction, and they
    are served only through the conversation's owner's queries. Listings defer `data`.
    What a run read from the image is kept beside it, so a regenerated answer cites it alike.
    """

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="attachments")
    position = models.PositiveSmallIntegerField(help_text="1, 2, ...: the order sent; 'image 1' in citations.")
    name = models.CharField(max_length=255)
    mime_type = models.CharField(max_length=32, help_text="Read from the content, not the name.")
    size = models.PositiveIntegerField()
    data = models.BinaryField()
    text = models.TextField(blank=True, help_text="Its text, read by OCR when a run first used it.")
    description = models.TextField(blank=True, help_text="The vision model's description, when there was one.")
    read_problem = models.CharField(max_length=500, blank=True, help_text="Why nothing could be read from it.")
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["message", "position"]
        constraints = [models.UniqueConstraint(fields=["message", "position"], name="chat_attachment_position")]


class RunMode(models.TextChoices):
    STANDARD = "standard", "Standard RAG"
    AGENT = "agent", "Agent"
    INBOX = "inbox", "Inbox"


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    ERROR = "error", "Error"
    CANCELLED = "cancelled", "Cancelled"


# A run in one of these has ended: it cannot be cancelled, and its conversation can be regenerated.
FINISHED_RUN_STATUSES = frozenset({RunStatus.COMPLETED, RunStatus.ERROR, RunStatus.CANCELLED})


class AgentRun(TimestampedModel):
    # A UUID: run ids appear in SSE URLs and must not be guessable or enumerable.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_runs")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="runs")
    question = models.ForeignKey(Message, on_delete=models.SET_NULL, null=True, related_name="+")
    answer = models.ForeignKey(Message, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    mode = models.CharField(max_length=16, choices=RunMode.choices, default=RunMode.STANDARD)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    iterations = models.PositiveIntegerField(default=0)
    # Agent mode: the request's limit on rounds of tool calls, already capped by the setting.
    max_iterations = models.PositiveSmallIntegerField(null=True, blank=True)
    # The model the request chose for every call of the run (LLM_MODELS_ALLOWED); empty: the configured ones.
    model = models.CharField(max_length=100, blank=True)
    # One of LANGUAGES: the asker's when the run was asked for (their account choice, else the request's),
    # for what the worker writes them. Empty without a request (evaluations, `manage.py ask`): the owner's.
    language = models.CharField(max_length=8, blank=True)
    tool_calls = models.JSONField(default=list, blank=True, help_text="Every call: name, input, output, status, ms")
    metrics = models.JSONField(default=dict, blank=True)
    fallback_reason = models.TextField(blank=True)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "-created_at"])]


class FeedbackRating(models.TextChoices):
    UP = "up", "Helpful"
    DOWN = "down", "Not helpful"


class MessageFeedback(TimestampedModel):
    """A user's rating of an answer: one per user and message, changed in place."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="feedback")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    rating = models.CharField(max_length=8, choices=FeedbackRating.choices)
    comment = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["message", "user"], name="chat_feedback_one_per_user_message")]


class WebhookTool(TimestampedModel):
    """An operator-defined tool the agent may call: a POST to an allow-listed URL."""

    name = models.SlugField(max_length=64, unique=True)
    description = models.TextField()
    url = models.URLField()
    input_schema = models.JSONField(default=dict, help_text="JSON schema of the tool's input")
    timeout_seconds = models.FloatField(default=10.0)
    enabled = models.BooleanField(default=True)
    folders = models.ManyToManyField(Folder, blank=True, related_name="webhook_tools")

    def __str__(self) -> str:
        return self.name


class DocumentSummary(TimestampedModel):
    """A model-written summary of a whole file, computed on demand by `get_document_summary`.

    Valid while the file's content key (`summaries.content_key`) is `content_key`: a changed file
    gets a new summary on the next request, and the stale one is replaced.
    """

    file = models.OneToOneField(File, on_delete=models.CASCADE, related_name="+")
    content_key = models.CharField(max_length=255)
    model = models.CharField(max_length=255)
    text = models.TextField()
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)

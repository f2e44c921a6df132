"""Inbox conversations and their typed messages (seed 002 content types).

A folder's inbox conversation continues while it is active within `WINDOW`; the next message
after a quiet spell starts a new one and completes the old. Creators of one folder's conversation
take a transaction-scoped advisory lock, so concurrent workers posting suggestions for files
dropped together land in one conversation, not several.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.chat.models import Conversation, ConversationKind, ConversationStatus, Message, MessageRole, MessageType
from apps.library.models import Folder

# The advisory lock namespace for "inbox conversation of folder N" (an arbitrary constant).
_LOCK_NAMESPACE = 8002


def conversation_window() -> dt.timedelta:
    return dt.timedelta(minutes=settings.INBOX_CONVERSATION_WINDOW_MINUTES)


@transaction.atomic
def inbox_conversation_current(*, folder: Folder) -> Conversation:
    """The folder's active inbox conversation if it moved recently; otherwise a new one."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_NAMESPACE, folder.pk])
    active = Conversation.objects.filter(
        owner_id=folder.owner_id, folder=folder, kind=ConversationKind.INBOX, status=ConversationStatus.ACTIVE
    )
    latest = active.order_by("-last_activity_at", "-id").first()
    now = timezone.now()
    if latest is not None and latest.last_activity_at >= now - conversation_window():
        return latest
    active.update(status=ConversationStatus.COMPLETED, updated_at=now)
    return Conversation.objects.create(
        owner_id=folder.owner_id, folder=folder, kind=ConversationKind.INBOX, title=f"Inbox of {folder.name}"[:255]
    )


def inbox_message_add(
    *,
    conversation: Conversation,
    type: str,
    content: dict[str, Any],
    role: str = MessageRole.AGENT,
    metadata: dict[str, Any] | None = None,
) -> Message:
    message = Message.objects.create(
        conversation=conversation, role=role, type=type, content=content, metadata=metadata or {}
    )
    Conversation.objects.filter(pk=conversation.pk).update(last_activity_at=message.created_at)
    return message


def message_event_payload(message: Message) -> dict[str, Any]:
    """A typed message as the `message` event carries it: the whole content, not only text."""
    return {
        "id": message.pk,
        "conversation_id": message.conversation_id,
        "role": message.role,
        "type": message.type,
        "text": message_text(message),
        "content": message.content,
        "metadata": message.metadata,
        "created_at": message.created_at.isoformat(),
    }


def message_text(message: Message) -> str:
    """A one-line reading of any message type, for feeds and for the agents' history."""
    content = message.content or {}
    if message.type == MessageType.SUGGESTION:
        return (
            f"Suggestion: move {content.get('filePath', '')} to {content.get('targetFolder', '')} "
            f"({round(float(content.get('confidence', 0)) * 100)}% sure). {content.get('reasoning', '')}"
        ).strip()
    if message.type == MessageType.SEARCH_RESULT:
        paths = ", ".join(str(result.get("path", "")) for result in content.get("results", []))
        return f'Found {content.get("totalFound", 0)} for "{content.get("query", "")}": {paths}'
    if message.type == MessageType.ACTION_RESULT:
        return str(content.get("details", ""))
    if message.type == MessageType.CLARIFICATION:
        return str(content.get("question", ""))
    if message.type == MessageType.FILE:
        return f"Saved {content.get('path', '')}"
    return str(content.get("text", ""))

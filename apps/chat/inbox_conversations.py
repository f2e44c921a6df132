"""A folder's inbox conversation: the inbox runner and organize's suggestions and moves both post
to it, and both sit above chat.

A folder's inbox conversation continues while it is active within the window; the next message
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

from apps.chat.models import Conversation, ConversationKind, ConversationStatus, Message, MessageRole
from apps.library.models import Folder

# The advisory lock namespace for "inbox conversation of folder N" (an arbitrary constant).
_INBOX_LOCK_NAMESPACE = 8002


def inbox_conversation_window() -> dt.timedelta:
    return dt.timedelta(minutes=settings.INBOX_CONVERSATION_WINDOW_MINUTES)


@transaction.atomic
def inbox_conversation_current(*, folder: Folder) -> Conversation:
    """The folder's active inbox conversation if it moved recently; otherwise a new one."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_INBOX_LOCK_NAMESPACE, folder.pk])
    active = Conversation.objects.filter(
        owner_id=folder.owner_id, folder=folder, kind=ConversationKind.INBOX, status=ConversationStatus.ACTIVE
    )
    latest = active.order_by("-last_activity_at", "-id").first()
    now = timezone.now()
    if latest is not None and latest.last_activity_at >= now - inbox_conversation_window():
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

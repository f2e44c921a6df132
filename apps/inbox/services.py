"""Writes of the inbox conversation API: a user's message and the run that answers it."""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext as _

from apps.chat.inbox_conversations import inbox_conversation_current, inbox_message_add
from apps.chat.models import AgentRun, Conversation, ConversationStatus, MessageRole, MessageType, RunMode
from apps.core.api import ConflictError
from apps.library.models import Folder


@transaction.atomic
def inbox_message_post(*, conversation: Conversation, text: str, language: str = "") -> AgentRun:
    """The user's message and a queued inbox run; the caller decides where the run executes.

    `language`: the asker's (`apps.core.preferences.answer_language`), for what the worker writes.

    Posting to a conversation that went quiet (completed) picks it up again; an archived one is closed.
    """
    if conversation.status == ConversationStatus.ARCHIVED:
        raise ConflictError(_("This conversation is archived; start a new one."))
    if conversation.status != ConversationStatus.ACTIVE:
        Conversation.objects.filter(pk=conversation.pk).update(status=ConversationStatus.ACTIVE)
    question = inbox_message_add(
        conversation=conversation, role=MessageRole.USER, type=MessageType.TEXT, content={"text": text}
    )
    return AgentRun.objects.create(
        owner_id=conversation.owner_id,
        conversation=conversation,
        question=question,
        mode=RunMode.INBOX,
        language=language,
    )


def inbox_conversation_start(
    *, folder: Folder, text: str | None, language: str = ""
) -> tuple[Conversation, AgentRun | None]:
    """The folder's current inbox conversation (continued or new), with the first message if any."""
    conversation = inbox_conversation_current(folder=folder)
    run = inbox_message_post(conversation=conversation, text=text, language=language) if text else None
    return conversation, run

"""Reads of conversations, messages and runs, always scoped to their owner."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Prefetch, QuerySet

from apps.chat.models import AgentRun, Conversation, ConversationKind, Message, MessageFeedback, MessageRole
from apps.chat.prompts import HistoryTurn
from apps.llm.types import Role

_HISTORY_ROLES = {MessageRole.USER: Role.USER, MessageRole.AGENT: Role.ASSISTANT}


def conversation_list(
    *,
    user: AbstractBaseUser | AnonymousUser,
    folder_id: int | None = None,
    status: str | None = None,
    kind: str = ConversationKind.CHAT,
) -> QuerySet[Conversation]:
    """The owner's conversations of one kind, newest activity first, each with its message count."""
    conversations = Conversation.objects.filter(owner_id=user.pk, kind=kind)
    if folder_id is not None:
        conversations = conversations.filter(folder_id=folder_id)
    if status:
        conversations = conversations.filter(status=status)
    return conversations.annotate(message_count=Count("messages")).order_by("-last_activity_at", "-id")


def conversation_get(*, user: AbstractBaseUser | AnonymousUser, conversation_id: int) -> Conversation | None:
    return conversation_list(user=user).filter(pk=conversation_id).first()


def conversation_get_with_messages(
    *, user: AbstractBaseUser | AnonymousUser, conversation_id: int
) -> Conversation | None:
    """A conversation with its messages and, on each, the asker's rating of it (`my_feedback`)."""
    feedback = Prefetch("feedback", queryset=MessageFeedback.objects.filter(user=user.pk), to_attr="my_feedback")
    messages = Prefetch("messages", queryset=Message.objects.prefetch_related(feedback))
    return conversation_list(user=user).filter(pk=conversation_id).prefetch_related(messages).first()


def message_get(*, user: AbstractBaseUser | AnonymousUser, message_id: int) -> Message | None:
    """A message of one of the user's conversations (of any kind)."""
    return Message.objects.filter(pk=message_id, conversation__owner_id=user.pk).first()


def conversation_history(
    *, conversation_id: int, before_message_id: int, max_tokens: int, max_messages: int
) -> list[HistoryTurn]:
    """The latest user/agent turns before a message, oldest first, within a token budget.

    Tokens are estimated at four characters each: close enough to bound the prompt, and the
    same for every provider.
    """
    recent = (
        Message.objects.filter(conversation_id=conversation_id, id__lt=before_message_id, role__in=list(_HISTORY_ROLES))
        .order_by("-id")
        .values_list("role", "content")[:max_messages]
    )
    turns: list[HistoryTurn] = []
    budget = max_tokens
    for role, content in recent:
        text = str((content or {}).get("text", "")).strip()
        cost = len(text) // 4 + 1
        if not text:
            continue
        if cost > budget:
            break
        budget -= cost
        turns.append(HistoryTurn(role=_HISTORY_ROLES[MessageRole(role)], text=text))
    return turns[::-1]


def answer_get(*, user: AbstractBaseUser | AnonymousUser, message_id: int) -> Message | None:
    """An answer in one of the user's folder chats."""
    return (
        Message.objects.select_related("conversation")
        .filter(pk=message_id, role=MessageRole.AGENT, conversation__owner_id=user.pk)
        .filter(conversation__kind=ConversationKind.CHAT)
        .first()
    )


def run_get(*, user: AbstractBaseUser | AnonymousUser, run_id: uuid.UUID) -> AgentRun | None:
    return AgentRun.objects.filter(pk=run_id, owner_id=user.pk).first()

"""Reads of conversations, messages and runs, always scoped to their owner.

An owner reads a conversation while they may still view its folder: a revoked member's
conversations, runs and answers of that folder are 404 to them like any other id. A removed
folder's owner keeps theirs (`folder` null, see `Conversation.folder`), read-only.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Prefetch, Q, QuerySet

from apps.chat.models import AgentRun, Conversation, ConversationKind, Message, MessageFeedback, MessageRole
from apps.chat.prompts import HistoryTurn
from apps.library.access import FolderAction, folder_ids_allowed
from apps.library.models import File
from apps.llm.types import Role

# Where an answer keeps the passages it names: each marked `source_removed` once its file is gone.
CITED_SOURCE_KEYS = ("citations", "sources_consulted")

_HISTORY_ROLES = {MessageRole.USER: Role.USER, MessageRole.AGENT: Role.ASSISTANT}


def conversation_list(
    *,
    user: AbstractBaseUser | AnonymousUser,
    folder_id: int | None = None,
    status: str | None = None,
    kind: str = ConversationKind.CHAT,
) -> QuerySet[Conversation]:
    """The owner's conversations of one kind, newest activity first, each with its message count."""
    conversations = Conversation.objects.filter(_readable(user=user), kind=kind)
    if folder_id is not None:
        conversations = conversations.filter(folder_id=folder_id)
    if status:
        conversations = conversations.filter(status=status)
    return conversations.annotate(message_count=Count("messages")).order_by("-last_activity_at", "-id")


def conversation_list_of_removed_folders(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Conversation]:
    """The owner's chats kept from folders since removed (read-only; the folders page lists them)."""
    return conversation_list(user=user).filter(folder__isnull=True)


def _readable(*, user: AbstractBaseUser | AnonymousUser, via: str = "") -> Q:
    """The user's own conversations (through `via`, e.g. "conversation__") they may still read."""
    allowed = folder_ids_allowed(user=user, action=FolderAction.VIEW)
    return Q(**{f"{via}owner_id": user.pk}) & (
        Q(**{f"{via}folder_id__in": allowed}) | Q(**{f"{via}folder_id__isnull": True})
    )


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
    return Message.objects.filter(_readable(user=user, via="conversation__"), pk=message_id).first()


@dataclass(frozen=True)
class HistoryWindow:
    turns: list[HistoryTurn]  # oldest first
    first_id: int  # the oldest message kept (`before_message_id` when none is): older ones were dropped


def conversation_window(
    *, conversation_id: int, before_message_id: int, max_tokens: int, max_messages: int
) -> HistoryWindow:
    """The latest user/agent turns before a message within a token budget, and where they start.

    Tokens are estimated at four characters each: close enough to bound the prompt, and the
    same for every provider.
    """
    recent = (
        Message.objects.filter(conversation_id=conversation_id, id__lt=before_message_id, role__in=list(_HISTORY_ROLES))
        .order_by("-id")
        .values_list("id", "role", "content")[:max_messages]
    )
    turns: list[HistoryTurn] = []
    budget, first_id = max_tokens, before_message_id
    for message_id, role, content in recent:
        text = message_turn_text(content)
        cost = len(text) // 4 + 1
        if not text:
            continue
        if cost > budget:
            break
        budget -= cost
        first_id = message_id
        turns.append(HistoryTurn(role=_HISTORY_ROLES[MessageRole(role)], text=text))
    return HistoryWindow(turns=turns[::-1], first_id=first_id)


def conversation_turns_between(*, conversation_id: int, after_id: int, before_id: int) -> list[HistoryTurn]:
    """The user/agent turns with text strictly between two message ids, oldest first."""
    rows = (
        Message.objects.filter(
            conversation_id=conversation_id, id__gt=after_id, id__lt=before_id, role__in=list(_HISTORY_ROLES)
        )
        .order_by("id")
        .values_list("role", "content")
    )
    turns = [
        HistoryTurn(role=_HISTORY_ROLES[MessageRole(role)], text=message_turn_text(content)) for role, content in rows
    ]
    return [turn for turn in turns if turn.text]


def message_turn_text(content: object) -> str:
    return str((content or {}).get("text", "") if isinstance(content, dict) else "").strip()


def answer_get(*, user: AbstractBaseUser | AnonymousUser, message_id: int) -> Message | None:
    """An answer in one of the user's folder chats."""
    return (
        Message.objects.select_related("conversation")
        .filter(_readable(user=user, via="conversation__"), pk=message_id, role=MessageRole.AGENT)
        .filter(conversation__kind=ConversationKind.CHAT)
        .first()
    )


def runs_readable(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[AgentRun]:
    return AgentRun.objects.filter(_readable(user=user, via="conversation__"), owner_id=user.pk)


def run_get(*, user: AbstractBaseUser | AnonymousUser, run_id: uuid.UUID) -> AgentRun | None:
    return runs_readable(user=user).filter(pk=run_id).first()


def cited_file_ids_present(*, conversation: Conversation, messages: list[Message]) -> set[int]:
    """Which files the messages cite still exist in the conversation's folder (none, once it is removed)."""
    return cited_files_present(conversations=[conversation], messages=messages)


def cited_files_present(*, conversations: Iterable[Conversation], messages: Iterable[Message]) -> set[int]:
    """Which files the messages cite still exist, each in its own conversation's folder (none of a
    removed folder's): one query for a whole page of conversations."""
    folder_of = {conversation.pk: conversation.folder_id for conversation in conversations}
    wanted = {
        (folder_id, file_id)
        for message in messages
        if (folder_id := folder_of.get(message.conversation_id)) is not None
        for file_id in _cited_file_ids(message.content)
    }
    if not wanted:
        return set()
    rows = File.objects.filter(pk__in={file_id for _, file_id in wanted}).values_list("folder_id", "pk")
    return {file_id for folder_id, file_id in rows if (folder_id, file_id) in wanted}


def _cited_file_ids(content: object) -> set[int]:
    """The files an answer's citations and consulted sources name."""
    if not isinstance(content, dict):
        return set()
    return {
        source["file_id"]
        for key in CITED_SOURCE_KEYS
        for source in content.get(key) or []
        if isinstance(source, dict) and isinstance(source.get("file_id"), int)
    }

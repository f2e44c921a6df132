"""Reads of conversations, messages and runs, always scoped to their owner.

An owner reads a conversation while they may still view its folder: a revoked member's
conversations, runs and answers of that folder are 404 to them like any other id. A removed
folder's owner keeps theirs (`folder` null, see `Conversation.folder`), read-only.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Prefetch, Q, QuerySet

from apps.chat.models import (
    AgentRun,
    Conversation,
    ConversationKind,
    Message,
    MessageAttachment,
    MessageFeedback,
    MessageRole,
)
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


@dataclass(frozen=True)
class MessageCursor:
    """Where a page of a conversation's messages starts: its oldest message, in the messages' own
    order (created_at, id), so messages written meanwhile never shift a page being read."""

    created_at: dt.datetime
    id: int

    def encode(self) -> str:
        raw = f"{self.created_at.isoformat()}|{self.id}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, value: str) -> MessageCursor:
        """Raises ValueError for anything `encode` did not write."""
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode()
            moment, _, message_id = raw.partition("|")
            created_at = dt.datetime.fromisoformat(moment)
        except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
            raise ValueError("not a cursor") from exc
        if created_at.tzinfo is None or not message_id.isdigit():
            raise ValueError("not a cursor")
        return cls(created_at=created_at, id=int(message_id))


@dataclass(frozen=True)
class MessagePage:
    messages: list[Message]  # oldest first
    next_cursor: str | None  # the page of the messages before these; None: there are none


def message_page(*, messages: QuerySet[Message], limit: int | None, before: MessageCursor | None = None) -> MessagePage:
    """The latest `limit` of `messages` (None: all) before the cursor (seed 002's conversation
    `?limit=`): a conversation is read from its end, and each page leads to the one before it."""
    if before is not None:
        messages = messages.filter(
            Q(created_at__lt=before.created_at) | Q(created_at=before.created_at, id__lt=before.id)
        )
    if limit is None:
        return MessagePage(messages=list(messages.order_by("created_at", "id")), next_cursor=None)
    latest = list(messages.order_by("-created_at", "-id")[: limit + 1])
    page = latest[:limit][::-1]
    older = len(latest) > limit
    return MessagePage(
        messages=page,
        next_cursor=MessageCursor(created_at=page[0].created_at, id=page[0].pk).encode() if older else None,
    )


def conversation_message_page(
    *,
    user: AbstractBaseUser | AnonymousUser,
    conversation: Conversation,
    limit: int | None,
    before: MessageCursor | None,
) -> MessagePage:
    """A page of a chat's messages, each with the asker's rating of it (`my_feedback`) and its
    attachments (without their bytes)."""
    feedback = Prefetch("feedback", queryset=MessageFeedback.objects.filter(user=user.pk), to_attr="my_feedback")
    attachments = Prefetch("attachments", queryset=MessageAttachment.objects.defer("data"))
    messages = Message.objects.filter(conversation=conversation).prefetch_related(feedback, attachments)
    return message_page(messages=messages, limit=limit, before=before)


def attachment_get(*, user: AbstractBaseUser | AnonymousUser, attachment_id: int) -> MessageAttachment | None:
    """An image of a question in one of the user's conversations they may still read."""
    readable = _readable(user=user, via="message__conversation__")
    return MessageAttachment.objects.filter(readable, pk=attachment_id).first()


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

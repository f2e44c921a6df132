"""Reads of the inbox: conversations of one owner, their pending suggestions, the files waiting in inbox/."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Prefetch, QuerySet

from apps.chat.messages import message_text
from apps.chat.models import Conversation, ConversationKind, Message
from apps.chat.selectors import MessageCursor, MessagePage, conversation_list, message_page
from apps.library.access import FolderAction, folder_ids_allowed
from apps.library.models import File, FileStatus, Folder
from apps.library.selectors import folder_files_under
from apps.organize.models import OrganizationSettings, OrganizationSuggestion, SuggestionStatus
from apps.organize.paths import INBOX

LIST_MESSAGES = 20
CONTEXT_MESSAGES = 3
INBOX_FILES_SHOWN = 20
UNSUGGESTED_SHOWN = 100


def inbox_conversation_list(
    *, user: AbstractBaseUser | AnonymousUser, folder_id: int | None = None, status: str | None = None
) -> QuerySet[Conversation]:
    """Newest activity first, each with its latest messages (for a feed) and its message count."""
    latest = Prefetch(
        "messages", queryset=Message.objects.order_by("-created_at", "-id")[:LIST_MESSAGES], to_attr="latest"
    )
    conversations = conversation_list(user=user, folder_id=folder_id, status=status, kind=ConversationKind.INBOX)
    return conversations.prefetch_related(latest)


def inbox_conversation_get(*, user: AbstractBaseUser | AnonymousUser, conversation_id: int) -> Conversation | None:
    return conversation_list(user=user, kind=ConversationKind.INBOX).filter(pk=conversation_id).first()


def conversation_messages(*, conversation_id: int, limit: int) -> list[Message]:
    """The latest `limit` messages, oldest first."""
    latest = Message.objects.filter(conversation_id=conversation_id).order_by("-created_at", "-id")[:limit]
    return list(latest)[::-1]


def conversation_message_page(*, conversation_id: int, limit: int, before: MessageCursor | None) -> MessagePage:
    """The latest `limit` messages before the cursor, oldest first, and the cursor of those before them."""
    return message_page(messages=Message.objects.filter(conversation_id=conversation_id), limit=limit, before=before)


def pending_suggestions(*, conversation: Conversation) -> list[OrganizationSuggestion]:
    """What a yes or no answers: the latest pending suggestion shown in this conversation, with the
    others the same agent turn made (one run's batch), newest first."""
    pending = OrganizationSuggestion.objects.filter(
        status=SuggestionStatus.PENDING, owner_id=conversation.owner_id, message__conversation_id=conversation.pk
    ).select_related("message")
    latest = pending.order_by("-created_at", "-id").first()
    if latest is None:
        return []
    run_id = latest.message.metadata.get("run_id") if latest.message else None
    if not run_id:
        return [latest]
    return list(pending.filter(message__metadata__run_id=run_id).order_by("-created_at", "-id"))


def recent_context(*, conversation_id: int, before_message_id: int) -> list[str]:
    """The last few messages as one line each, oldest first, for the router's prompt."""
    messages = Message.objects.filter(conversation_id=conversation_id, id__lt=before_message_id).order_by("-id")
    return [f"{message.role}: {message_text(message)}" for message in messages[:CONTEXT_MESSAGES]][::-1]


def last_shown_file_ids(*, conversation_id: int, before_message_id: int) -> list[int]:
    """Files of the latest search result or suggestion shown: what "it" or "them" refers to."""
    message = (
        Message.objects.filter(
            conversation_id=conversation_id, id__lt=before_message_id, type__in=["search_result", "suggestion"]
        )
        .order_by("-id")
        .first()
    )
    if message is None:
        return []
    if message.type == "suggestion":
        suggestion = OrganizationSuggestion.objects.filter(pk=message.content.get("suggestionId")).first()
        return [suggestion.file_id] if suggestion else []
    return [int(result["fileId"]) for result in message.content.get("results", []) if result.get("fileId")]


def inbox_files(*, folder_id: int, limit: int = INBOX_FILES_SHOWN) -> list[File]:
    return folder_files_under(folder_id=folder_id, prefix=INBOX, limit=limit)


# What an inbox listing says of a file that has no pending suggestion, by its indexing status.
_WAITING = {
    FileStatus.PENDING: "Waiting to be read",
    FileStatus.INDEXING: "Being read",
    FileStatus.SKIPPED: "Skipped: it could not be read",
    FileStatus.FAILED: "Could not be read",
}


def inbox_file_states(*, folder_id: int, limit: int = INBOX_FILES_SHOWN) -> list[tuple[File, str]]:
    """The files waiting in inbox/, each with where it stands: its pending suggestion, or why none."""
    files = inbox_files(folder_id=folder_id, limit=limit)
    pending = {
        suggestion.file_id: suggestion
        for suggestion in OrganizationSuggestion.objects.filter(
            file_id__in=[file.pk for file in files], status=SuggestionStatus.PENDING
        )
    }
    states = []
    for file in files:
        suggestion = pending.get(file.pk)
        if suggestion is not None:
            state = f"Suggested: {suggestion.target_folder} ({round(suggestion.confidence * 100)}% sure)"
        else:
            state = _WAITING.get(file.status, "No suggestion yet")  # type: ignore[call-overload]
        states.append((file, state))
    return states


@dataclass(frozen=True)
class UnsuggestedFile:
    """An inbox file with no pending suggestion, and why none was made."""

    id: int
    folder_id: int
    folder_name: str
    path: str
    name: str
    reason: str


def inbox_files_without_suggestion(*, folder_ids: Iterable[int] | QuerySet[Folder, Any]) -> QuerySet[File]:
    """Files under inbox/ of these folders that have no pending suggestion, whatever their status."""
    return File.objects.filter(folder_id__in=folder_ids, path__startswith=INBOX).exclude(
        suggestions__status=SuggestionStatus.PENDING
    )


def inbox_files_unsuggested(*, user: AbstractBaseUser | AnonymousUser, limit: int) -> list[UnsuggestedFile]:
    """Indexed files under inbox/ of every folder the user organizes that wait without a suggestion."""
    files = list(
        inbox_files_without_suggestion(folder_ids=folder_ids_allowed(user=user, action=FolderAction.EDIT))
        .filter(status=FileStatus.INDEXED)
        .select_related("folder")
        .only("id", "folder_id", "path", "name", "folder__name", "folder__owner_id")
        .order_by("-updated_at", "-id")[:limit]
    )
    kept = set(
        OrganizationSuggestion.objects.filter(
            file_id__in=[file.pk for file in files], status=SuggestionStatus.REJECTED
        ).values_list("file_id", flat=True)
    )
    owners = {file.folder.owner_id for file in files}
    suggesting = dict(OrganizationSettings.objects.filter(owner_id__in=owners).values_list("owner_id", "auto_suggest"))
    return [
        UnsuggestedFile(
            id=file.pk,
            folder_id=file.folder_id,
            folder_name=file.folder.name,
            path=file.path,
            name=file.name,
            reason=_unsuggested_reason(kept=file.pk in kept, auto_suggest=suggesting.get(file.folder.owner_id, True)),
        )
        for file in files
    ]


def _unsuggested_reason(*, kept: bool, auto_suggest: bool) -> str:
    if kept:
        return "You kept it in the inbox."
    if not auto_suggest:
        return "Automatic suggestions are off."
    return "No folder fitted it well enough to suggest one."

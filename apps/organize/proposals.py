"""Answers to "Shall I remember that?": a proposed guideline line is remembered or declined.

`decisions` proposes a line after consistent decisions (a message whose metadata holds the
proposal, and a `guideline_proposal` event). Remembering appends it to the folder's
``guideline.md`` through its source, so the very next suggestion reads it; declining keeps the file
as it is. Either way the proposal is closed (`status`) and never asked again, and an
`action_result` message says what happened.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from apps.chat.inbox_conversations import inbox_message_add
from apps.chat.models import ConversationKind, Message, MessageType
from apps.core.api import ConflictError
from apps.library.models import Folder
from apps.organize.decisions import NotFoundError
from apps.organize.guideline import GUIDELINE_PATH, guideline_line_append

PROPOSAL_KEY = "guideline_proposal"
REMEMBERED = "remembered"
DECLINED = "declined"


def guideline_proposal_pending(*, conversation_id: int) -> Message | None:
    """The conversation's latest proposal, when it is still unanswered (what a yes or no means)."""
    latest = (
        Message.objects.filter(conversation_id=conversation_id, metadata__has_key=PROPOSAL_KEY).order_by("-id").first()
    )
    if latest is None or latest.metadata[PROPOSAL_KEY].get("status"):
        return None
    return latest


def guideline_proposal_folder_id(*, message_id: int) -> int | None:
    return (
        Message.objects.filter(pk=message_id, conversation__kind=ConversationKind.INBOX, metadata__has_key=PROPOSAL_KEY)
        .values_list("conversation__folder_id", flat=True)
        .first()
    )


def guideline_proposal_respond(*, message_id: int, remember: bool) -> tuple[Message, Message]:
    """Remember (append the line to guideline.md) or decline; returns the proposal and the result.

    409 when it was answered already; the source's refusal (ApplicationError) changes nothing."""
    with transaction.atomic():
        proposal = (
            Message.objects.select_for_update(of=("self",))
            .select_related("conversation")
            .filter(pk=message_id, conversation__kind=ConversationKind.INBOX, metadata__has_key=PROPOSAL_KEY)
            .first()
        )
        if proposal is None:
            raise NotFoundError(_("Proposal not found."))
        line: dict[str, Any] = proposal.metadata[PROPOSAL_KEY]
        if line.get("status"):
            answered = {
                REMEMBERED: _("This line was already remembered."),
                DECLINED: _("This line was already declined."),
            }
            raise ConflictError(answered.get(line["status"], _("This line was already answered.")))
        if remember:
            folder = Folder.objects.get(pk=proposal.conversation.live_folder_id)
            added = guideline_line_append(folder=folder, line=line["line"])
            details = f"Added to {GUIDELINE_PATH}: {line['line']}" if added else f"{GUIDELINE_PATH} already says that."
        else:
            details = f"OK, {GUIDELINE_PATH} stays as it is."
        proposal.metadata = {
            **proposal.metadata,
            PROPOSAL_KEY: {**line, "status": REMEMBERED if remember else DECLINED},
        }
        proposal.save(update_fields=["metadata", "updated_at"])
        result = inbox_message_add(
            conversation=proposal.conversation,
            type=MessageType.ACTION_RESULT,
            content={"action": "guideline", "success": True, "details": details, "proposalId": proposal.pk},
            metadata={"agent": "organize"},
        )
    return proposal, result

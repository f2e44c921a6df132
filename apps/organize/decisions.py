"""Writes of deciding: responses to suggestions, automatic moves, undo, expiry.

Accepting moves the file at the source and in the index (`moves.file_relocate`) and records a
decision that teaches; rejecting records the decision and keeps the file where it is. Each
decision posts its `action_result` message to the folder's inbox conversation.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from apps.chat.inbox_conversations import inbox_conversation_current, inbox_message_add
from apps.chat.models import Conversation, ConversationKind, Message, MessageType
from apps.core.api import ApplicationError, ConflictError
from apps.core.audit import AuditAction, audit_record
from apps.core.events import folder_channel, publish_event
from apps.library.models import Folder
from apps.library.selectors import file_embedding_get
from apps.organize.guideline import guideline_read
from apps.organize.learning import guideline_proposal, similar_decisions
from apps.organize.models import (
    DecisionAction,
    FileMove,
    OrganizationDecision,
    OrganizationSuggestion,
    SuggestionStatus,
)
from apps.organize.moves import file_relocate
from apps.organize.paths import folder_path_clean, parent_folder

logger = logging.getLogger(__name__)

PROPOSAL_EVENT = "guideline_proposal"
# The `agent` of a suggestion the user dictated ("move X to Y"): accepted as it is written.
TOLD_AGENT = "user"


class NotFoundError(ApplicationError):
    status_code = 404


@dataclass(frozen=True)
class RespondOutcome:
    suggestion: OrganizationSuggestion
    move: FileMove | None
    message: Message | None


def suggestion_respond(
    *,
    suggestion_id: int,
    owner_id: int,
    action: str,
    target_folder: str | None = None,
    actor: AbstractBaseUser | None = None,
) -> RespondOutcome:
    """Accept (move to the suggested folder), choose (move to `target_folder`) or reject.

    `owner_id` is the folder owner's (suggestions are theirs); `actor` who decided, when a person
    did (an editor, or the owner), for the audit log."""
    chosen = folder_path_clean(target_folder or "") if action == DecisionAction.CHOOSE else None
    now = timezone.now()
    with transaction.atomic():
        suggestion = (
            OrganizationSuggestion.objects.select_for_update(of=("self",))
            .select_related("message")
            .filter(pk=suggestion_id, owner_id=owner_id)
            .first()
        )
        if suggestion is None:
            raise NotFoundError(gettext("Suggestion not found."))
        _ensure_open(suggestion, now=now)
        if action == DecisionAction.REJECT:
            suggestion_decide(suggestion=suggestion, status=SuggestionStatus.REJECTED, now=now)
            _decision_record(suggestion=suggestion, action=action, final_target="")
            return RespondOutcome(suggestion=suggestion, move=None, message=None)
        target = chosen or suggestion.target_folder
        move = _accept(suggestion=suggestion, target=target, automatic=False, now=now, actor=actor)
        decision = _decision_record(suggestion=suggestion, action=action, final_target=target)
        message = _action_message(
            suggestion=suggestion, details=f"Moved {move.from_path} to {move.to_path}.", move=move
        )
    _propose_guideline_line(suggestion=suggestion, target=target, embedding=decision.digest_embedding)
    return RespondOutcome(suggestion=suggestion, move=move, message=message)


def suggestion_auto_move(*, suggestion_id: int) -> FileMove | None:
    """Move without asking (auto_move above its threshold). Teaches nothing: nobody decided."""
    try:
        with transaction.atomic():
            suggestion = (
                OrganizationSuggestion.objects.select_for_update(of=("self",))
                .select_related("message")
                .get(pk=suggestion_id, status=SuggestionStatus.PENDING)
            )
            move = _accept(suggestion=suggestion, target=suggestion.target_folder, automatic=True, now=timezone.now())
            _action_message(
                suggestion=suggestion,
                details=(
                    f"Moved {move.from_path} to {move.to_path} automatically "
                    f"({round(suggestion.confidence * 100)}% sure). Undo it if that was wrong."
                ),
                move=move,
            )
    except ApplicationError as exc:
        logger.info("automatic move of suggestion %s not done: %s", suggestion_id, exc.message)
        return None
    return move


def suggestions_expire() -> int:
    """Pending suggestions past their expiry, in one conditional UPDATE."""
    now = timezone.now()
    return OrganizationSuggestion.objects.filter(status=SuggestionStatus.PENDING, expires_at__lt=now).update(
        status=SuggestionStatus.EXPIRED, updated_at=now
    )


# -- moves -------------------------------------------------------------------------------------


def move_undo(*, move_id: int, owner_id: int, actor: AbstractBaseUser | None = None) -> FileMove:
    """Put a moved file back where it was. The folder it had left counts as declined for it; the
    suggestion it was moved by is open again (`_reopen`)."""
    with transaction.atomic():
        move = (
            FileMove.objects.select_for_update(of=("self",))
            .select_related("suggestion__message")
            .filter(pk=move_id, owner_id=owner_id)
            .first()
        )
        if move is None:
            raise NotFoundError(gettext("Move not found."))
        if move.undone_at is not None:
            raise ConflictError(gettext("This move was already undone."))
        file, _ = file_relocate(file_id=move.file_id, expected_path=move.to_path, new_path=move.from_path)
        move.undone_at = timezone.now()
        move.save(update_fields=["undone_at", "updated_at"])
        _announce_move(move=move, folder_id=file.folder_id, undone=True)
        _audit_move(move=move, actor=actor, action=AuditAction.UNDO, folder_id=file.folder_id)
        suggestion = move.suggestion
        if suggestion is not None:
            _decision_record(
                suggestion=suggestion, action=DecisionAction.REJECT, final_target="", target=parent_folder(move.to_path)
            )
            _action_message(suggestion=suggestion, details=f"Moved {move.to_path} back to {move.from_path}.", move=move)
            _reopen(suggestion)
    return move


def _reopen(suggestion: OrganizationSuggestion) -> None:
    """An undone move leaves the file where it was before the decision, and so its suggestion:
    pending again, to accept, keep or send elsewhere. Not one the user dictated (the file then
    waits without a suggestion), nor when another is already pending for the file."""
    message = suggestion.message
    if message is not None and message.metadata.get("agent") == TOLD_AGENT:
        return
    if OrganizationSuggestion.objects.filter(file_id=suggestion.file_id, status=SuggestionStatus.PENDING).exists():
        return
    now = timezone.now()
    suggestion.status = SuggestionStatus.PENDING
    suggestion.decided_at = None
    suggestion.expires_at = now + dt.timedelta(days=settings.ORGANIZE_SUGGESTION_TTL_DAYS)
    suggestion.save(update_fields=["status", "decided_at", "expires_at", "updated_at"])


def _accept(
    *,
    suggestion: OrganizationSuggestion,
    target: str,
    automatic: bool,
    now: dt.datetime,
    actor: AbstractBaseUser | None = None,
) -> FileMove:
    """Move the file into `target` and mark the suggestion accepted."""
    new_path = target + PurePosixPath(suggestion.source_path).name
    file, old_path = file_relocate(file_id=suggestion.file_id, expected_path=suggestion.source_path, new_path=new_path)
    move = FileMove.objects.create(
        owner_id=suggestion.owner_id,
        file=file,
        suggestion=suggestion,
        from_path=old_path,
        to_path=file.path,
        automatic=automatic,
    )
    suggestion_decide(suggestion=suggestion, status=SuggestionStatus.ACCEPTED, now=now)
    _announce_move(move=move, folder_id=file.folder_id, undone=False)
    _audit_move(move=move, actor=actor, action=AuditAction.MOVE, folder_id=file.folder_id)
    return move


def _audit_move(*, move: FileMove, actor: AbstractBaseUser | None, action: str, folder_id: int) -> None:
    if actor is None:
        actor = get_user_model().objects.filter(pk=move.owner_id).first()
    target = move.from_path if action == AuditAction.UNDO else move.to_path
    audit_record(
        actor=actor,
        action=action,
        folder_id=folder_id,
        target=target,
        detail={"from": move.from_path, "to": move.to_path, "move": move.pk, "automatic": move.automatic},
    )


def _announce_move(*, move: FileMove, folder_id: int, undone: bool) -> None:
    """A `file_moved` event on the file's folder stream (`folder_id`), once the move is committed."""
    data = {
        "folder_id": folder_id,
        "move_id": move.pk,
        "file_id": move.file_id,
        "suggestion_id": move.suggestion_id,
        "from_path": move.to_path if undone else move.from_path,
        "to_path": move.from_path if undone else move.to_path,
        "automatic": move.automatic,
        "undone": undone,
    }
    transaction.on_commit(lambda: publish_event(channel=folder_channel(folder_id), type="file_moved", data=data))


# -- helpers -----------------------------------------------------------------------------------


def suggestion_decide(*, suggestion: OrganizationSuggestion, status: str, now: dt.datetime) -> None:
    """Close a suggestion with `status` (the caller holds its row lock)."""
    suggestion.status = status
    suggestion.decided_at = now
    suggestion.save(update_fields=["status", "decided_at", "updated_at"])


def _ensure_open(suggestion: OrganizationSuggestion, *, now: dt.datetime) -> None:
    if suggestion.status != SuggestionStatus.PENDING:
        raise ConflictError(
            gettext("This suggestion was already %(status)s.")
            % {"status": str(suggestion.get_status_display()).lower()}
        )
    if suggestion.expires_at is not None and suggestion.expires_at <= now:
        raise ConflictError(gettext("This suggestion has expired; ask for a new one."))


def _decision_record(
    *, suggestion: OrganizationSuggestion, action: str, final_target: str, target: str | None = None
) -> OrganizationDecision:
    embedding = file_embedding_get(file_id=suggestion.file_id)
    return OrganizationDecision.objects.create(
        owner_id=suggestion.owner_id,
        folder_id=suggestion.folder_id,
        suggestion=suggestion,
        file_name=PurePosixPath(suggestion.source_path).name[:255],
        suggested_target=target or suggestion.target_folder,
        final_target=final_target,
        action=action,
        digest_embedding=embedding,
    )


def _conversation_of(suggestion: OrganizationSuggestion) -> Conversation:
    message = suggestion.message
    if message is not None:
        conversation = Conversation.objects.filter(pk=message.conversation_id, kind=ConversationKind.INBOX).first()
        if conversation is not None:
            return conversation
    return inbox_conversation_current(folder=Folder.objects.get(pk=suggestion.folder_id))


def _action_message(*, suggestion: OrganizationSuggestion, details: str, move: FileMove) -> Message:
    return inbox_message_add(
        conversation=_conversation_of(suggestion),
        type=MessageType.ACTION_RESULT,
        content={
            "action": "move",
            "success": True,
            "details": details,
            "moveId": move.pk,
            "suggestionId": suggestion.pk,
        },
        metadata={"agent": "organize", "automatic": move.automatic},
    )


def _propose_guideline_line(*, suggestion: OrganizationSuggestion, target: str, embedding: Any) -> None:
    """After enough consistent acceptances, offer a guideline line (a message, and its card's
    event); the line is written only when the user says so (`proposals`).

    `embedding`: the file's, as its decision recorded it.
    """
    decisions = similar_decisions(owner_id=suggestion.owner_id, folder_id=suggestion.folder_id, embedding=embedding)
    proposal = guideline_proposal(decisions=decisions, target=target)
    if proposal is None:
        return
    already = Message.objects.filter(
        conversation__folder_id=suggestion.folder_id,
        conversation__kind=ConversationKind.INBOX,
        metadata__guideline_proposal__target=proposal.target,
        metadata__guideline_proposal__pattern=proposal.pattern,
    ).exists()
    folder = Folder.objects.get(pk=suggestion.folder_id)
    if already or proposal.line in guideline_read(folder=folder):
        return
    message = inbox_message_add(
        conversation=_conversation_of(suggestion),
        type=MessageType.TEXT,
        content={
            "text": (
                f"You have put {len(proposal.file_names)} similar files in {target} "
                f"({', '.join(proposal.file_names[:3])}). Shall I remember that? Add this line to guideline.md:\n\n"
                f"{proposal.line}"
            )
        },
        metadata={
            "agent": "organize",
            "guideline_proposal": {
                "target": proposal.target,
                "pattern": proposal.pattern,
                "line": proposal.line,
                "decision_ids": list(proposal.decision_ids),
            },
        },
    )
    # On the folder's stream once committed: the inbox shows the proposal's card live.
    data = {"message_id": message.pk, **message.metadata["guideline_proposal"]}
    transaction.on_commit(lambda: publish_event(channel=folder_channel(folder.pk), type=PROPOSAL_EVENT, data=data))

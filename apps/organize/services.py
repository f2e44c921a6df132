"""Writes of organizing: the one writer of suggestions, responses to them, moves, undo, expiry.

Whoever proposes a folder (the offline policy, the organize agent's tool, the on-demand API),
`suggestion_create` writes the suggestion and its `suggestion` message. Accepting moves the file
at the source and in the index (`moves.file_relocate`) and records a decision that teaches;
rejecting records the decision and keeps the file where it is.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.chat.inbox.conversations import inbox_conversation_current, inbox_message_add
from apps.chat.models import Conversation, ConversationKind, Message, MessageType
from apps.core.api import ApplicationError, ConflictError
from apps.core.events import folder_channel, publish_event
from apps.library.models import File, FileStatus, Folder
from apps.organize.guideline import guideline_read
from apps.organize.learning import guideline_proposal, similar_decisions
from apps.organize.models import (
    DecisionAction,
    FileMove,
    OrganizationDecision,
    OrganizationSettings,
    OrganizationSuggestion,
    SuggestionStatus,
)
from apps.organize.moves import file_relocate
from apps.organize.paths import INBOX, folder_path_clean, in_inbox, parent_folder
from apps.organize.selectors import (
    file_for_organize,
    organization_settings_get,
    organize_inputs,
    pending_suggestion_for_file,
)

logger = logging.getLogger(__name__)

ON_DEMAND_MAX_FILES = 100
MAX_REASONING_CHARS = 2000
MAX_ALTERNATIVES = 5


class NotFoundError(ApplicationError):
    status_code = 404


@dataclass(frozen=True)
class SuggestOutcome:
    path: str
    suggestion: OrganizationSuggestion | None = None
    skipped: str = ""  # why there is no new suggestion
    move: FileMove | None = None  # an automatic move above the auto-move threshold


@dataclass(frozen=True)
class RespondOutcome:
    suggestion: OrganizationSuggestion
    move: FileMove | None
    message: Message | None


# -- settings ----------------------------------------------------------------------------------


def organization_settings_update(*, owner_id: int, values: dict[str, Any]) -> OrganizationSettings:
    """Apply validated `values` over the current settings; the result must still be coherent."""
    current = organization_settings_get(owner_id=owner_id)
    for name in ("include_folders", "exclude_folders"):
        if name in values:
            values[name] = list(dict.fromkeys(folder_path_clean(path, field=name) for path in values[name]))
    for name, value in values.items():
        setattr(current, name, value)
    if current.auto_move_threshold < current.suggest_threshold:
        raise ApplicationError("auto_move_threshold must be at least suggest_threshold.")
    current.save()
    return current


# -- suggestions -------------------------------------------------------------------------------


def suggestion_create(
    *,
    file: File,
    target: str,
    reasoning: str,
    confidence: float,
    alternatives: Sequence[dict[str, Any]] = (),
    conversation: Conversation | None = None,
    run_id: str = "",
    agent: str = "policy",
    supersede: bool = False,
) -> OrganizationSuggestion:
    """Write a pending suggestion and its `suggestion` message.

    A pending suggestion for the file blocks a new one, unless `supersede` (the user asked
    again): then one for the same folder is returned as it is, and one for another folder expires.
    """
    target = folder_path_clean(target)
    if target == parent_folder(file.path):
        raise ApplicationError(f"{file.path} is already in {target}.")
    now = timezone.now()
    with transaction.atomic():
        pending = (
            OrganizationSuggestion.objects.select_for_update()
            .filter(file_id=file.pk, status=SuggestionStatus.PENDING)
            .first()
        )
        if pending is not None:
            if not supersede:
                raise ConflictError(f"{file.path} already has a pending suggestion ({pending.target_folder}).")
            if pending.target_folder == target:
                return pending
            _decide(pending, status=SuggestionStatus.EXPIRED, now=now)
        conversation = conversation or inbox_conversation_current(folder=file.folder)
        try:
            with transaction.atomic():
                suggestion = OrganizationSuggestion.objects.create(
                    owner_id=file.folder.owner_id,
                    folder_id=file.folder_id,
                    file=file,
                    source_path=file.path,
                    target_folder=target,
                    reasoning=reasoning[:MAX_REASONING_CHARS],
                    confidence=round(max(0.0, min(1.0, confidence)), 2),
                    alternatives=_clean_alternatives(alternatives, target=target),
                    expires_at=now + dt.timedelta(days=settings.ORGANIZE_SUGGESTION_TTL_DAYS),
                )
        except IntegrityError as exc:  # another writer created one for this file meanwhile
            raise ConflictError(f"{file.path} already has a pending suggestion.") from exc
        suggestion.message = inbox_message_add(
            conversation=conversation,
            type=MessageType.SUGGESTION,
            content=suggestion_content(suggestion),
            metadata={"agent": agent, **({"run_id": run_id} if run_id else {})},
        )
        suggestion.save(update_fields=["message", "updated_at"])
    transaction.on_commit(lambda: _announce(suggestion))
    return suggestion


def suggestion_content(suggestion: OrganizationSuggestion) -> dict[str, Any]:
    """The seed's `suggestion` message content."""
    return {
        "suggestionId": suggestion.pk,
        "filePath": suggestion.source_path,
        "fileName": PurePosixPath(suggestion.source_path).name,
        "targetFolder": suggestion.target_folder,
        "reasoning": suggestion.reasoning,
        "confidence": suggestion.confidence,
        "alternatives": suggestion.alternatives,
    }


def file_suggest(
    *,
    file_id: int,
    on_demand: bool = False,
    force: bool = False,
    conversation: Conversation | None = None,
    run_id: str = "",
) -> SuggestOutcome:
    """Suggest a folder for one file with the offline policy.

    Automatic (after indexing): only for indexed inbox files, when the owner's auto_suggest is on,
    at or above their suggest_threshold; above auto_move_threshold, with auto_move on, the file is
    moved at once. On demand: any file, any confidence, no automatic move. `force` offers folders
    the user already declined for this file again.
    """
    file = file_for_organize(file_id=file_id)
    if file is None:
        return SuggestOutcome(path="", skipped="not in the index")
    preferences = organization_settings_get(owner_id=file.folder.owner_id)
    blocked = _blocker(file=file, preferences=preferences, on_demand=on_demand)
    if blocked is not None:
        return blocked
    inputs = organize_inputs(file=file, preferences=preferences)
    proposal = inputs.propose(ignore_rejections=force)
    best = proposal.best
    if best is None:
        return SuggestOutcome(path=file.path, skipped="no folder fits it; it stays in the inbox")
    if not on_demand and best.confidence < preferences.suggest_threshold:
        return SuggestOutcome(
            path=file.path,
            skipped=f"best folder {best.folder} at {best.confidence:.2f}, under your threshold "
            f"{preferences.suggest_threshold:.2f}",
        )
    try:
        suggestion = suggestion_create(
            file=file,
            target=best.folder,
            reasoning=best.reasoning,
            confidence=best.confidence,
            alternatives=[alternative.as_alternative() for alternative in proposal.alternatives],
            conversation=conversation,
            run_id=run_id,
        )
    except ApplicationError as exc:  # a pending one raced in, or the guideline names an unusable folder
        return SuggestOutcome(path=file.path, skipped=exc.message)
    move = None if on_demand else auto_move_if_allowed(suggestion=suggestion, preferences=preferences)
    return SuggestOutcome(path=file.path, suggestion=suggestion, move=move)


def auto_suggest_blocker(*, file: File) -> SuggestOutcome | None:
    """Why the digest-complete hook must not suggest for `file` (as an outcome), or None."""
    preferences = organization_settings_get(owner_id=file.folder.owner_id)
    return _blocker(file=file, preferences=preferences, on_demand=False)


def auto_move_if_allowed(
    *, suggestion: OrganizationSuggestion, preferences: OrganizationSettings | None = None
) -> FileMove | None:
    """Move at once when the owner allows it at this confidence; `preferences` if already read."""
    if preferences is None:
        preferences = organization_settings_get(owner_id=suggestion.owner_id)
    if preferences.auto_move and suggestion.confidence >= preferences.auto_move_threshold:
        return suggestion_auto_move(suggestion_id=suggestion.pk)
    return None


def file_suggest_auto(*, file_id: int) -> SuggestOutcome:
    """The digest-complete hook: the organize agent when a model is configured, else the policy."""
    from apps.chat.inbox.organize_agent import organize_agent_available, organize_file_with_agent

    if organize_agent_available():
        outcome = organize_file_with_agent(file_id=file_id)
        if outcome is not None:
            return outcome
    return file_suggest(file_id=file_id)


def files_suggest(*, folder: Folder, paths: Sequence[str] | None, force: bool = False) -> list[SuggestOutcome]:
    """On demand: the given paths, or every file under inbox/, each suggested with the policy."""
    files = File.objects.filter(folder=folder).only("pk", "path")
    if paths is None:
        chosen = list(files.filter(path__startswith=INBOX).order_by("path")[:ON_DEMAND_MAX_FILES])
        missing: list[str] = []
    else:
        wanted = list(dict.fromkeys(paths))
        by_path = {file.path: file for file in files.filter(path__in=wanted)}
        chosen = [by_path[path] for path in wanted if path in by_path]
        missing = [path for path in wanted if path not in by_path]
    conversation = inbox_conversation_current(folder=folder) if chosen else None
    outcomes = [SuggestOutcome(path=path, skipped="no such file in this folder's index") for path in missing]
    outcomes += [
        file_suggest(file_id=file.pk, on_demand=True, force=force, conversation=conversation) for file in chosen
    ]
    return outcomes


def suggestion_respond(
    *, suggestion_id: int, owner_id: int, action: str, target_folder: str | None = None
) -> RespondOutcome:
    """Accept (move to the suggested folder), choose (move to `target_folder`) or reject."""
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
            raise NotFoundError("Suggestion not found.")
        _ensure_open(suggestion, now=now)
        if action == DecisionAction.REJECT:
            _decide(suggestion, status=SuggestionStatus.REJECTED, now=now)
            _decision_record(suggestion=suggestion, action=action, final_target="")
            return RespondOutcome(suggestion=suggestion, move=None, message=None)
        target = chosen or suggestion.target_folder
        move = _accept(suggestion=suggestion, target=target, automatic=False, now=now)
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


def move_undo(*, move_id: int, owner_id: int) -> FileMove:
    """Put a moved file back where it was. The folder it had left counts as declined for it."""
    with transaction.atomic():
        move = (
            FileMove.objects.select_for_update(of=("self",))
            .select_related("suggestion__message")
            .filter(pk=move_id, owner_id=owner_id)
            .first()
        )
        if move is None:
            raise NotFoundError("Move not found.")
        if move.undone_at is not None:
            raise ConflictError("This move was already undone.")
        file_relocate(file_id=move.file_id, expected_path=move.to_path, new_path=move.from_path)
        move.undone_at = timezone.now()
        move.save(update_fields=["undone_at", "updated_at"])
        suggestion = move.suggestion
        if suggestion is not None:
            _decision_record(
                suggestion=suggestion, action=DecisionAction.REJECT, final_target="", target=parent_folder(move.to_path)
            )
            _action_message(suggestion=suggestion, details=f"Moved {move.to_path} back to {move.from_path}.", move=move)
    return move


def _accept(*, suggestion: OrganizationSuggestion, target: str, automatic: bool, now: dt.datetime) -> FileMove:
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
    _decide(suggestion, status=SuggestionStatus.ACCEPTED, now=now)
    return move


# -- helpers -----------------------------------------------------------------------------------


def _blocker(*, file: File, preferences: OrganizationSettings, on_demand: bool) -> SuggestOutcome | None:
    skipped = ""
    if not on_demand:
        if not preferences.auto_suggest:
            skipped = "automatic suggestions are off"
        elif not in_inbox(file.path):
            skipped = "not in the inbox"
        elif file.status != FileStatus.INDEXED or file.indexed_checksum != file.checksum:
            skipped = "not indexed in its current version"
    if skipped:
        return SuggestOutcome(path=file.path, skipped=skipped)
    pending = pending_suggestion_for_file(file_id=file.pk)
    if pending is not None:
        return SuggestOutcome(path=file.path, suggestion=pending, skipped="a suggestion is already pending")
    return None


def _decide(suggestion: OrganizationSuggestion, *, status: str, now: dt.datetime) -> None:
    suggestion.status = status
    suggestion.decided_at = now
    suggestion.save(update_fields=["status", "decided_at", "updated_at"])


def _ensure_open(suggestion: OrganizationSuggestion, *, now: dt.datetime) -> None:
    if suggestion.status != SuggestionStatus.PENDING:
        raise ConflictError(f"This suggestion was already {suggestion.get_status_display().lower()}.")
    if suggestion.expires_at is not None and suggestion.expires_at <= now:
        raise ConflictError("This suggestion has expired; ask for a new one.")


def _decision_record(
    *, suggestion: OrganizationSuggestion, action: str, final_target: str, target: str | None = None
) -> OrganizationDecision:
    embedding = File.objects.filter(pk=suggestion.file_id).values_list("embedding", flat=True).first()
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
    """After enough consistent acceptances, offer a guideline line (a message; never written).

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
    inbox_message_add(
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


def _clean_alternatives(alternatives: Sequence[dict[str, Any]], *, target: str) -> list[dict[str, Any]]:
    cleaned: list[dict[str, Any]] = []
    for alternative in alternatives:
        try:
            folder = folder_path_clean(str(alternative.get("folder", "")), field="alternative folder")
        except ApplicationError:
            continue  # a model's unusable alternative is dropped, not fatal
        if folder == target or any(item["folder"] == folder for item in cleaned):
            continue
        item: dict[str, Any] = {"folder": folder, "reasoning": str(alternative.get("reasoning", ""))[:500]}
        if isinstance(alternative.get("confidence"), int | float):
            item["confidence"] = round(max(0.0, min(1.0, float(alternative["confidence"]))), 2)
        cleaned.append(item)
    return cleaned[:MAX_ALTERNATIVES]


def _announce(suggestion: OrganizationSuggestion) -> None:
    publish_event(
        channel=folder_channel(suggestion.folder_id),
        type="suggestion",
        data={"suggestion_id": suggestion.pk, **suggestion_content(suggestion)},
    )

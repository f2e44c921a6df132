"""Writes of organizing: settings, and the one writer of suggestions.

Whoever proposes a folder (the offline policy, the organize agent's tool, the on-demand API),
`suggestion_create` writes the suggestion and its `suggestion` message. Responses to suggestions,
automatic moves, undo and expiry are in `decisions`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.chat.inbox_conversations import inbox_conversation_current, inbox_message_add
from apps.chat.models import Conversation, MessageType
from apps.core.api import ApplicationError, ConflictError
from apps.core.events import folder_channel, publish_event
from apps.library.models import File, FileStatus, Folder
from apps.library.selectors import folder_files_get_by_path, folder_files_under
from apps.organize.decisions import (
    TOLD_AGENT,
    RespondOutcome,
    suggestion_auto_move,
    suggestion_decide,
    suggestion_respond,
)
from apps.organize.models import (
    DecisionAction,
    FileMove,
    OrganizationSettings,
    OrganizationSuggestion,
    SuggestionStatus,
)
from apps.organize.paths import INBOX, folder_path_clean, in_inbox, parent_folder
from apps.organize.selectors import (
    file_for_organize,
    organization_settings_get,
    organize_inputs,
    pending_suggestion_for_file,
)

ON_DEMAND_MAX_FILES = 100
# Published when an inbox file is left without a suggestion, with the reason: the inbox lists it
# with "Suggest a folder" instead of nothing at all.
INBOX_FILE_EVENT = "inbox_file"
# Why nothing was suggested, when the reason is about the file's place rather than a passing state.
_NOT_LISTED = ("not in the inbox", "not indexed in its current version", "not in the index")
MAX_REASONING_CHARS = 2000
MAX_ALTERNATIVES = 5


@dataclass(frozen=True)
class SuggestOutcome:
    path: str
    suggestion: OrganizationSuggestion | None = None
    skipped: str = ""  # why there is no new suggestion
    move: FileMove | None = None  # an automatic move above the auto-move threshold


@dataclass(frozen=True)
class OrganizeAgent:
    """A model that organizes one file without a conversation (after its digest)."""

    available: Callable[[], bool]
    # (file_id=...) -> the agent's outcome, or None to let the offline policy decide
    organize_file: Callable[..., SuggestOutcome | None]


# The organize agent lives in `apps.inbox`, above organize; it registers here (`InboxConfig.ready`).
ORGANIZE_AGENTS: dict[str, OrganizeAgent] = {}


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
        raise ApplicationError(_("auto_move_threshold must be at least suggest_threshold."))
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
        raise ApplicationError(_("%(path)s is already in %(folder)s.") % {"path": file.path, "folder": target})
    now = timezone.now()
    with transaction.atomic():
        pending = (
            OrganizationSuggestion.objects.select_for_update()
            .filter(file_id=file.pk, status=SuggestionStatus.PENDING)
            .first()
        )
        if pending is not None:
            if not supersede:
                raise ConflictError(
                    _("%(path)s already has a pending suggestion (%(folder)s).")
                    % {"path": file.path, "folder": pending.target_folder}
                )
            if pending.target_folder == target:
                return pending
            suggestion_decide(suggestion=pending, status=SuggestionStatus.EXPIRED, now=now)
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
            raise ConflictError(_("%(path)s already has a pending suggestion.") % {"path": file.path}) from exc
        suggestion.message = inbox_message_add(
            conversation=conversation,
            type=MessageType.SUGGESTION,
            content=suggestion_content(suggestion),
            metadata={"agent": agent, **({"run_id": run_id} if run_id else {})},
        )
        suggestion.save(update_fields=["message", "updated_at"])
    transaction.on_commit(lambda: _announce(suggestion))
    return suggestion


def file_move_as_told(
    *, file: File, target: str, conversation: Conversation | None = None, run_id: str = ""
) -> RespondOutcome:
    """The user said where `file` goes: it goes there, whatever was learned from their past decisions.

    Kept as a suggestion they accepted, so the move teaches (it lifts an earlier "not there") and
    has an Undo like any other. ApplicationError when it cannot be done (already there, taken).
    """
    suggestion = suggestion_create(
        file=file,
        target=target,
        reasoning="You asked for this move.",
        confidence=1.0,
        conversation=conversation,
        run_id=run_id,
        agent=TOLD_AGENT,
        supersede=True,
    )
    return suggestion_respond(suggestion_id=suggestion.pk, owner_id=suggestion.owner_id, action=DecisionAction.ACCEPT)


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
    outcome = None
    for agent in ORGANIZE_AGENTS.values():
        if outcome is None and agent.available():
            outcome = agent.organize_file(file_id=file_id)
    outcome = outcome or file_suggest(file_id=file_id)
    if outcome.suggestion is None and outcome.skipped and outcome.skipped not in _NOT_LISTED:
        _announce_unsuggested(file_id=file_id, reason=outcome.skipped)
    return outcome


def _announce_unsuggested(*, file_id: int, reason: str) -> None:
    file = File.objects.filter(pk=file_id).values("folder_id", "path").first()
    if file is not None:
        data = {"file_id": file_id, "path": file["path"], "reason": reason}
        publish_event(channel=folder_channel(file["folder_id"]), type=INBOX_FILE_EVENT, data=data)


def files_suggest(*, folder: Folder, paths: Sequence[str] | None, force: bool = False) -> list[SuggestOutcome]:
    """On demand: the given paths, or every file under inbox/, each suggested with the policy."""
    if paths is None:
        chosen = folder_files_under(folder_id=folder.pk, prefix=INBOX, limit=ON_DEMAND_MAX_FILES)
        missing: list[str] = []
    else:
        wanted = list(dict.fromkeys(paths))
        by_path = folder_files_get_by_path(folder_id=folder.pk, paths=wanted)
        chosen = [by_path[path] for path in wanted if path in by_path]
        missing = [path for path in wanted if path not in by_path]
    conversation = inbox_conversation_current(folder=folder) if chosen else None
    outcomes = [SuggestOutcome(path=path, skipped="no such file in this folder's index") for path in missing]
    outcomes += [
        file_suggest(file_id=file.pk, on_demand=True, force=force, conversation=conversation) for file in chosen
    ]
    return outcomes


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
        data={"suggestion_id": suggestion.pk, "file_id": suggestion.file_id, **suggestion_content(suggestion)},
    )

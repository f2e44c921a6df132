"""Deciding many suggestions at once: "Accept all above N%"."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser

from apps.core.api import ApplicationError
from apps.organize.decisions import suggestion_respond
from apps.organize.models import DecisionAction, FileMove, OrganizationSuggestion


@dataclass(frozen=True)
class Declined:
    suggestion_id: int
    path: str
    reason: str


@dataclass
class BulkOutcome:
    moves: list[FileMove] = field(default_factory=list)
    failed: list[Declined] = field(default_factory=list)


def suggestions_accept(
    *, suggestions: Iterable[OrganizationSuggestion], actor: AbstractBaseUser | None = None
) -> BulkOutcome:
    """Accept each suggestion (each in its own transaction): one that cannot be carried out (the
    file changed or the place is taken) is reported with why, and the others still move."""
    outcome = BulkOutcome()
    for suggestion in suggestions:
        try:
            result = suggestion_respond(
                suggestion_id=suggestion.pk, owner_id=suggestion.owner_id, action=DecisionAction.ACCEPT, actor=actor
            )
        except ApplicationError as exc:
            declined = Declined(suggestion_id=suggestion.pk, path=suggestion.source_path, reason=exc.message)
            outcome.failed.append(declined)
            continue
        assert result.move is not None  # accepting always moves
        outcome.moves.append(result.move)
    return outcome

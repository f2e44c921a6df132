"""What the user's decisions teach about similar files.

Only decided suggestions are recorded (accept, reject, choose another folder); an automatic move
nobody reviewed teaches nothing. Similarity is the cosine between file vectors (the mean of a
file's chunk embeddings, stored with each decision), so "similar" means "about the same thing".

- A folder gains from acceptances of similar files and loses from their rejections.
- A folder rejected for a near-identical file (`PATTERN_SIMILARITY`) is not offered again until
  the user accepts it for such a file.
- After `PROPOSE_AFTER` consistent acceptances of one folder for similar files, the organize
  agent proposes a line for guideline.md (a message; the file is never written).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from pgvector.django import CosineDistance

from apps.organize.models import DecisionAction, OrganizationDecision

# Decisions this similar to a file count for it; with MiniLM, files of one kind (two payslips)
# score 0.8-0.95 and unrelated ones under 0.3.
SIMILARITY = 0.75
PATTERN_SIMILARITY = 0.9
PROPOSE_AFTER = 3
NEIGHBOURS = 50
# A choice of another folder says the suggested one was wrong, less firmly than a rejection.
CHOOSE_PENALTY = 0.5
_NAME_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*|\d+")
_YEAR = re.compile(r"^(19|20)\d{2}$")


@dataclass(frozen=True)
class SimilarDecision:
    id: int
    action: str
    suggested_target: str
    final_target: str
    file_name: str
    similarity: float


@dataclass
class LearnedTarget:
    folder: str
    net: float = 0.0  # sum of similarity, + for acceptances, - for rejections
    accepted: int = 0
    rejected: int = 0
    blocked: bool = False

    def describe(self) -> str:
        parts = []
        if self.accepted:
            parts.append(f"you put {self.accepted} similar file{'s' if self.accepted > 1 else ''} here before")
        if self.rejected:
            parts.append(f"you turned it down for {self.rejected} similar file{'s' if self.rejected > 1 else ''}")
        return " and ".join(parts)


@dataclass(frozen=True)
class GuidelineProposal:
    target: str
    pattern: str  # what the names share ("W2"), "" when nothing: with the target, what is proposed once
    line: str
    decision_ids: tuple[int, ...]
    file_names: tuple[str, ...]


def similar_decisions(
    *, owner_id: int, folder_id: int, embedding: Any, min_similarity: float = SIMILARITY
) -> list[SimilarDecision]:
    """The owner's decisions in this folder about files like this one, most similar first."""
    if embedding is None:
        return []
    rows = (
        OrganizationDecision.objects.filter(owner_id=owner_id, folder_id=folder_id, digest_embedding__isnull=False)
        .annotate(distance=CosineDistance("digest_embedding", embedding))
        .filter(distance__lte=1 - min_similarity)
        .order_by("distance", "-id")
        .values_list("id", "action", "suggested_target", "final_target", "file_name", "distance")[:NEIGHBOURS]
    )
    return [
        SimilarDecision(
            id=row[0],
            action=row[1],
            suggested_target=row[2],
            final_target=row[3],
            file_name=row[4],
            similarity=1 - float(row[5]),
        )
        for row in rows
    ]


def learned_targets(decisions: Sequence[SimilarDecision]) -> dict[str, LearnedTarget]:
    """Per folder, what similar decisions say; the latest near-identical one decides `blocked`."""
    learned: dict[str, LearnedTarget] = {}

    def target(folder: str) -> LearnedTarget:
        return learned.setdefault(folder, LearnedTarget(folder=folder))

    latest_verdict: dict[str, tuple[int, bool]] = {}  # folder -> (decision id, rejected)
    for decision in decisions:
        weight = decision.similarity
        if decision.action == DecisionAction.REJECT:
            entry = target(decision.suggested_target)
            entry.net -= weight
            entry.rejected += 1
            _verdict(latest_verdict, decision, decision.suggested_target, rejected=True)
        else:
            entry = target(decision.final_target)
            entry.net += weight
            entry.accepted += 1
            _verdict(latest_verdict, decision, decision.final_target, rejected=False)
            if decision.action == DecisionAction.CHOOSE and decision.suggested_target != decision.final_target:
                target(decision.suggested_target).net -= weight * CHOOSE_PENALTY
    for folder, (_, rejected) in latest_verdict.items():
        learned[folder].blocked = rejected
    return learned


def guideline_proposal(*, decisions: Sequence[SimilarDecision], target: str) -> GuidelineProposal | None:
    """A guideline line once the similar files' decisions agree on `target` often enough."""
    verdicts = [decision for decision in decisions if target in (decision.final_target, decision.suggested_target)]
    if any(decision.final_target != target for decision in verdicts):
        return None  # turned down or sent elsewhere for a similar file: not a consistent pattern
    accepted = list(verdicts)
    if len(accepted) < PROPOSE_AFTER:
        return None
    names = tuple(sorted(set(decision.file_name for decision in accepted)))
    pattern = " ".join(_common_name_tokens(names))
    examples = ", ".join(names[:3])
    described = f"Files named like {pattern} (e.g. {examples})" if pattern else f"Files like {examples}"
    return GuidelineProposal(
        target=target,
        pattern=pattern,
        line=f"- {described} go in `{target}`.",
        decision_ids=tuple(decision.id for decision in accepted),
        file_names=names,
    )


def _verdict(latest: dict[str, tuple[int, bool]], decision: SimilarDecision, folder: str, *, rejected: bool) -> None:
    if decision.similarity < PATTERN_SIMILARITY:
        return
    known = latest.get(folder)
    if known is None or decision.id > known[0]:
        latest[folder] = (decision.id, rejected)


def _common_name_tokens(names: Sequence[str]) -> list[str]:
    """Words every name shares (``W2_2023.pdf``, ``W2_2024.pdf`` -> ``["W2"]``), as first written."""
    token_lists = [
        [token for token in _NAME_TOKEN.findall(PurePosixPath(name).stem) if not _YEAR.match(token)] for name in names
    ]
    if not token_lists:
        return []
    shared = set.intersection(*({token.lower() for token in tokens} for tokens in token_lists))
    return [token for token in dict.fromkeys(token_lists[0]) if token.lower() in shared and not token.isdigit()]

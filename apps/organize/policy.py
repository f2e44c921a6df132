"""Where a file belongs, without a model: guideline rules, folder resemblance, past decisions.

Each candidate folder gets a strength, the sum of three kinds of evidence:

- guideline: the best rule sending files there, scored by the file's words it shares (IDF over
  the rules, so "w2" counts more than "tax"; words of the file name count double, and one-line
  rules count more than section descriptions);
- resemblance: cosine similarity of the file to the folder's centroid, from 0 (at 0.2 or less)
  to `VECTOR_WEIGHT` (at 0.7 or more);
- decisions: `LEARNING_WEIGHT` times the net similarity-weighted acceptances of similar files.

Confidence is how much the best folder dominates (a softmax over the candidates that are not
its ancestors or descendants, plus "leave it in the inbox" at `STAY_STRENGTH`) times how strong
its evidence is on its own (1 - exp(-strength / `SATURATION`)). One strong guideline rule on the
file name gives about 0.9; a vague resemblance alone stays under 0.5.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from apps.organize.guideline import GuidelineRule
from apps.organize.learning import LearnedTarget
from apps.organize.paths import INBOX, is_under, parent_folder
from apps.organize.terms import name_terms, organize_terms
from apps.organize.tree import FolderSimilarity

NAME_WEIGHT = 2.0
SPECIFIC_RULE_WEIGHT = 1.25
CORROBORATION = 0.25
QUOTE_CHARS = 200
VECTOR_WEIGHT = 3.0
VECTOR_FLOOR = 0.2
VECTOR_CEILING = 0.7
LEARNING_WEIGHT = 2.0
STAY_STRENGTH = 1.0
TEMPERATURE = 1.5
SATURATION = 3.0
MIN_ALTERNATIVE_STRENGTH = 1.0
MAX_ALTERNATIVES = 3
_YEAR = re.compile(r"(?<!\d)(19\d{2}|20\d{2})(?!\d)")  # "W2_2024": "_" is a word character
_TOKEN = re.compile(r"\b[A-Za-z]{1,2}-\d{1,2}\b|[^\W_]+")  # "W-2" whole, other words alone


@dataclass(frozen=True)
class FileFacts:
    path: str
    name: str
    text: str  # digest and preview: what the file says about itself


@dataclass(frozen=True)
class Candidate:
    folder: str
    confidence: float
    strength: float
    reasoning: str

    def as_alternative(self) -> dict[str, object]:
        return {"folder": self.folder, "reasoning": self.reasoning, "confidence": self.confidence}


@dataclass(frozen=True)
class Proposal:
    best: Candidate | None
    alternatives: tuple[Candidate, ...] = ()
    not_offered: dict[str, str] = field(default_factory=dict)  # folder -> why


@dataclass(frozen=True)
class _RuleMatch:
    rule: GuidelineRule
    score: float
    matched: tuple[str, ...]


@dataclass
class _Evidence:
    folder: str
    rules: list[_RuleMatch] = field(default_factory=list)
    similarity: FolderSimilarity | None = None
    learned: LearnedTarget | None = None

    @property
    def strength(self) -> float:
        return self.rule_strength + self.vector_strength + self.learned_strength

    @property
    def rule_strength(self) -> float:
        """The best rule, plus a little for a second one saying the same."""
        scores = sorted((match.score for match in self.rules), reverse=True)
        return scores[0] + CORROBORATION * scores[1] if len(scores) > 1 else sum(scores)

    @property
    def quoted(self) -> _RuleMatch | None:
        """The rule to cite: a one-line rule says it more precisely than a section description."""
        ranked = sorted(self.rules, key=lambda match: (not match.rule.specific, -match.score))
        return ranked[0] if ranked else None

    @property
    def vector_strength(self) -> float:
        if self.similarity is None:
            return 0.0
        scaled = (self.similarity.similarity - VECTOR_FLOOR) / (VECTOR_CEILING - VECTOR_FLOOR)
        return VECTOR_WEIGHT * min(1.0, max(0.0, scaled))

    @property
    def learned_strength(self) -> float:
        return LEARNING_WEIGHT * self.learned.net if self.learned else 0.0


def organize_propose(
    *,
    file: FileFacts,
    rules: Sequence[GuidelineRule],
    folders: Collection[str],
    similarities: Mapping[str, FolderSimilarity],
    learned: Mapping[str, LearnedTarget],
    rejected_here: Collection[str] = (),
    include: Collection[str] = (),
    exclude: Collection[str] = (),
) -> Proposal:
    """The best folder for `file`, with alternatives; folders it may not go to are listed, with why.

    `rejected_here` are folders the user already turned down for this very file.
    """
    year = _year_of(file)
    evidence: dict[str, _Evidence] = {}

    def entry(folder: str) -> _Evidence:
        return evidence.setdefault(folder, _Evidence(folder=folder))

    for folder in folders:
        entry(folder)
    for rule, score, matched in _rule_scores(file, rules):
        resolved = _resolve(rule.target, year=year)
        if resolved is None:
            continue
        entry(resolved).rules.append(_RuleMatch(rule=rule, score=score, matched=matched))
    for folder, similarity in similarities.items():
        if folder in evidence:
            evidence[folder].similarity = similarity
    for folder, learning in learned.items():
        entry(folder).learned = learning

    not_offered = _not_offered(evidence, file=file, rejected_here=rejected_here, include=include, exclude=exclude)
    ranked = sorted(
        (item for folder, item in evidence.items() if folder not in not_offered and item.strength > 0),
        key=lambda item: (-item.strength, item.folder),
    )
    if not ranked:
        return Proposal(best=None, not_offered=not_offered)
    best, *others = ranked
    best_candidate = _candidate(best, rivals=[item for item in others if not _nested(item.folder, best.folder)])
    alternatives = tuple(
        _candidate(
            item, rivals=[other for other in ranked if other is not item and not _nested(other.folder, item.folder)]
        )
        for item in others
        if item.strength >= MIN_ALTERNATIVE_STRENGTH
    )[:MAX_ALTERNATIVES]
    return Proposal(best=best_candidate, alternatives=alternatives, not_offered=not_offered)


def _rule_scores(file: FileFacts, rules: Sequence[GuidelineRule]) -> list[tuple[GuidelineRule, float, tuple[str, ...]]]:
    if not rules:
        return []
    weights: dict[str, float] = {word: 1.0 for word in organize_terms(file.text)}
    weights.update({word: NAME_WEIGHT for word in name_terms(file.name)})
    frequency: dict[str, int] = {}
    for rule in rules:
        for word in rule.terms:
            frequency[word] = frequency.get(word, 0) + 1
    scored = []
    surface = _surface_words(f"{file.name} {file.text}")
    for rule in rules:
        stems = [word for word in rule.terms if word in weights]
        if not stems:
            continue
        score = sum(weights[word] * math.log(1 + len(rules) / frequency[word]) for word in stems)
        matched = tuple(sorted({surface.get(word, word) for word in stems}, key=str.lower))
        scored.append((rule, score * (SPECIFIC_RULE_WEIGHT if rule.specific else 1.0), matched))
    return scored


def _surface_words(text: str) -> dict[str, str]:
    """Each term of `text` as the file wrote it first ("invoic" -> "INVOICE"): reasoning is for people."""
    words: dict[str, str] = {}
    for token in _TOKEN.findall(text):
        for term in organize_terms(token):
            words.setdefault(term, token if any(char.isdigit() for char in token) else token.lower())
    return words


def _not_offered(
    evidence: Mapping[str, _Evidence],
    *,
    file: FileFacts,
    rejected_here: Collection[str],
    include: Collection[str],
    exclude: Collection[str],
) -> dict[str, str]:
    reasons: dict[str, str] = {}
    for folder, item in evidence.items():
        reason = target_refusal(
            folder,
            file_path=file.path,
            rejected_here=rejected_here,
            learned=item.learned,
            include=include,
            exclude=exclude,
        )
        if reason:
            reasons[folder] = reason
    return reasons


def target_refusal(
    folder: str,
    *,
    file_path: str,
    rejected_here: Collection[str],
    learned: LearnedTarget | None,
    include: Collection[str],
    exclude: Collection[str],
) -> str:
    """Why `folder` may not be offered for the file at `file_path` ("" when it may)."""
    if folder == parent_folder(file_path):
        return "the file is already there"
    if is_under(folder, INBOX):
        return "the inbox is where files wait, not a destination"
    if folder in rejected_here:
        return "the user already declined it for this file"
    if learned is not None and learned.blocked:
        return "the user declined it for a file just like this one"
    if include and not any(is_under(folder, allowed) for allowed in include):
        return "not among the user's included folders"
    if any(is_under(folder, excluded) for excluded in exclude):
        return "excluded in the user's settings"
    return ""


def _candidate(item: _Evidence, *, rivals: Sequence[_Evidence]) -> Candidate:
    top = item.strength / TEMPERATURE
    others = [STAY_STRENGTH / TEMPERATURE, *(rival.strength / TEMPERATURE for rival in rivals)]
    peak = max(top, *others)
    share = math.exp(top - peak) / (math.exp(top - peak) + sum(math.exp(value - peak) for value in others))
    confidence = share * (1 - math.exp(-item.strength / SATURATION))
    return Candidate(
        folder=item.folder,
        confidence=round(max(0.0, min(1.0, confidence)), 2),
        strength=round(item.strength, 3),
        reasoning=_reasoning(item),
    )


def _reasoning(item: _Evidence) -> str:
    parts: list[str] = []
    match = item.quoted
    if match is not None:
        body = match.rule.text.split("\n", 1)[-1] if not match.rule.specific else match.rule.text
        quoted = " ".join(body.lstrip("-*# ").split())
        if len(quoted) > QUOTE_CHARS:
            quoted = quoted[: QUOTE_CHARS - 1] + "…"
        mentions = ", ".join(match.matched)
        parts.append(f'guideline.md line {match.rule.line}: "{quoted}" The file mentions {mentions}.')
    if item.vector_strength > 0 and item.similarity is not None:
        count = item.similarity.files
        parts.append(
            f"It resembles the {count} file{'s' if count != 1 else ''} already in {item.folder} "
            f"(similarity {item.similarity.similarity:.2f})."
        )
    if item.learned is not None and (item.learned.accepted or item.learned.rejected):
        described = item.learned.describe()
        parts.append(described[0].upper() + described[1:] + ".")
    return " ".join(parts) or f"{item.folder} is an existing folder, but nothing specific points there."


def _resolve(target: str, *, year: str | None) -> str | None:
    """``taxes/{year}/`` with the file's year, or ``taxes/`` when the file names none."""
    if "{year}" not in target:
        return target
    if year:
        return target.replace("{year}", year)
    kept = [segment for segment in target.rstrip("/").split("/") if "{year}" not in segment]
    return "/".join(kept) + "/" if kept else None


def _year_of(file: FileFacts) -> str | None:
    match = _YEAR.search(file.name) or _YEAR.search(file.text)
    return match.group(1) if match else None


def _nested(one: str, other: str) -> bool:
    return is_under(one, other) or is_under(other, one)

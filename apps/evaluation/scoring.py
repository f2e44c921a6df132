"""How an answer is scored against its question, how a run's metrics add up, and when a run has
regressed against the one before. Pure functions over plain values: the run executor feeds them.

Retrieval is judged by what the answer cites, not by what the search returned: `hit_rank` is the
position of the first expected file among the answer's cited files, in citation order (a file
cited twice counts once, where it is first cited). hit@1, hit@5 and MRR (the mean of 1/rank, 0 for
no hit) are over the questions that expect a file. Citation precision is the share of all cited
files, over every question, that some expected file list names; facts found the share of all
expected facts the answers state. Facts are compared case- and whitespace-insensitively, with
numbers normalised ("1,450" == "1450", "2,300.00" == "2300") and bounded by non-word characters,
so "1450" is not found in "14500".
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

# The metrics whose drop past a set's margin flags a run.
REGRESSION_METRICS = ("hit_at_5", "mrr", "facts_found", "citation_precision")
METRIC_DIGITS = 4
# A drop equal to the margin is not past it, however the floats round.
_EPSILON = 1e-9

# Digit groups: a comma, a no-break or thin space, an apostrophe (1'450 in Switzerland).
_SEPARATOR = r"[,\u00a0\u2009\u202f'\u2019]"
_NUMBER = re.compile(rf"\d+(?:{_SEPARATOR}\d{{3}}(?!\d))*(?:\.\d+)?")
_GROUP_SEPARATORS = re.compile(_SEPARATOR)
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Scored:
    """One answer's score; `answered`: it does not say it found nothing (see `answer_scored`)."""

    cited_files: list[str]
    hit_rank: int | None
    facts_found: list[str]
    answered: bool


@dataclass(frozen=True)
class ResultFigures:
    """What a run's metrics are computed from, per question."""

    expected_files: Sequence[str]
    expected_facts: Sequence[str]
    scored: Scored
    duration_ms: int
    tokens: int
    cost: Decimal


def cited_paths(citations: Iterable[Mapping[str, Any]]) -> list[str]:
    """The answer's cited files in citation order, each once (image attachments have no path)."""
    return list(dict.fromkeys(str(c["path"]) for c in citations if c.get("file_id") is not None and c.get("path")))


def answer_scored(
    *,
    text: str,
    cited_files: Sequence[str],
    expected_files: Sequence[str],
    expected_facts: Sequence[str],
    found_nothing: bool,
) -> Scored:
    """`found_nothing`: the answer cites nothing and says so (chat's own test of that sentence)."""
    expected = set(expected_files)
    rank = next((position for position, path in enumerate(cited_files, start=1) if path in expected), None)
    said = normalised(text)
    return Scored(
        cited_files=list(cited_files),
        hit_rank=rank,
        facts_found=[fact for fact in expected_facts if fact_stated(fact=fact, normalised_text=said)],
        answered=not found_nothing,
    )


def normalised(text: str) -> str:
    """Case-folded, whitespace collapsed, numbers without group separators or trailing zero decimals."""
    # Numbers first: NFKC would turn the spaces that group digits into plain ones.
    text = _NUMBER.sub(lambda match: _number(match.group(0)), text)
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACES.sub(" ", text).strip()


def _number(written: str) -> str:
    digits = _GROUP_SEPARATORS.sub("", written)
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    return digits


def fact_stated(*, fact: str, normalised_text: str) -> bool:
    wanted = normalised(fact)
    if not wanted:
        return False
    before = r"(?<!\w)" if wanted[0].isalnum() else ""
    after = r"(?!\w)" if wanted[-1].isalnum() else ""
    return re.search(before + re.escape(wanted) + after, normalised_text) is not None


def run_metrics(results: Sequence[ResultFigures]) -> dict[str, Any]:
    """The run's metrics; a share with nothing to count (no question expects a file, none has
    facts, nothing was cited) is None rather than a misleading 0 or 1."""
    with_files = [result for result in results if result.expected_files]
    ranks = [result.scored.hit_rank for result in with_files]
    cited = [path for result in results for path in result.scored.cited_files]
    expected_cited = sum(
        1 for result in results for path in result.scored.cited_files if path in set(result.expected_files)
    )
    facts_total = sum(len(result.expected_facts) for result in results)
    durations = sorted(result.duration_ms for result in results)
    return {
        "questions": len(results),
        "hit_at_1": _share(sum(1 for rank in ranks if rank == 1), len(ranks)),
        "hit_at_5": _share(sum(1 for rank in ranks if rank is not None and rank <= 5), len(ranks)),
        "mrr": _share(sum(1 / rank for rank in ranks if rank is not None), len(ranks)),
        "citation_precision": _share(expected_cited, len(cited)),
        "facts_found": _share(sum(len(result.scored.facts_found) for result in results), facts_total),
        "answered_share": _share(sum(1 for result in results if result.scored.answered), len(results)),
        "latency_p50": percentile(durations, 50),
        "latency_p95": percentile(durations, 95),
        "tokens": sum(result.tokens for result in results),
        "cost": float(sum((result.cost for result in results), Decimal(0))),
    }


def _share(part: float, whole: int) -> float | None:
    return round(part / whole, METRIC_DIGITS) if whole else None


def percentile(ordered: Sequence[int], pct: int) -> int | None:
    """Nearest rank: the smallest value at or above `pct` percent of them (milliseconds)."""
    if not ordered:
        return None
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def metrics_dropped(
    *, previous: Mapping[str, Any], now: Mapping[str, Any], margin: float
) -> dict[str, dict[str, float]]:
    """Each of REGRESSION_METRICS that fell by more than `margin` since `previous` (both measured)."""
    dropped = {}
    for name in REGRESSION_METRICS:
        before, after = previous.get(name), now.get(name)
        if isinstance(before, int | float) and isinstance(after, int | float) and before - after > margin + _EPSILON:
            dropped[name] = {"previous": before, "now": after, "drop": round(before - after, METRIC_DIGITS)}
    return dropped

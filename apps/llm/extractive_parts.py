"""A question as the parts an answer owes: "which trip is longer, and which has the bigger budget?"
is two parts, each with its own terms and the kind of figure it asks for.

A part starts at a question word after "and", a comma or a semicolon ("..., and who supplies it"),
so "Klara and the Sun" or "tomatoes and stock" stay whole. Comparatives ("longer", "costs more",
"most recently") are not terms a sentence should repeat: they say the part compares, and what
kind of figure settles it (a duration, an amount, a date).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from enum import StrEnum

from apps.llm.extractive_text import terms


class Kind(StrEnum):
    DURATION = "duration"
    AMOUNT = "amount"
    DATE = "date"
    COUNT = "count"


@dataclass(frozen=True)
class Part:
    text: str
    terms: frozenset[str]
    kind: Kind | None  # the figure the part asks for, if it asks for one
    comparative: bool  # settled by setting the compared things' figures side by side
    named: tuple[frozenset[str], ...] = ()  # the terms of each thing a part names as compared: "A or B"


_QUESTION_WORDS = (
    r"what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|should|will|would|has|have"
)
_PART_BREAK = re.compile(
    rf"\s*(?:[;?]|,?\s+and\s+(?=(?:{_QUESTION_WORDS})\b)|,\s+(?=(?:{_QUESTION_WORDS})\b))\s*", re.IGNORECASE
)
_NUMBER_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|twenty|thirty|"
    r"forty|fifty|hundred|half"
)
_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
# What a part asks for: the question's own phrase ("how long", "when") first, then the words
# that imply a figure ("the budget", "bigger"), so "when do I pay the rent" asks for a date.
_ASKS: list[tuple[Kind, re.Pattern[str]]] = [
    (Kind.DURATION, re.compile(r"\bhow long\b", re.IGNORECASE)),
    (Kind.COUNT, re.compile(r"\bhow many\b", re.IGNORECASE)),
    (Kind.AMOUNT, re.compile(r"\bhow much\b", re.IGNORECASE)),
    (Kind.DATE, re.compile(r"\bwhen\b|\bwhat (?:date|day|time)\b", re.IGNORECASE)),
    (Kind.DURATION, re.compile(r"\b(?:long|short)(?:er|est)\b|\bduration\b", re.IGNORECASE)),
    (Kind.COUNT, re.compile(r"\b(?:maximum|minimum) (?:number|size)\b", re.IGNORECASE)),
    (
        Kind.AMOUNT,
        re.compile(
            r"\bcosts?\b|\bprices?d?\b|\bbudget\b|\bexpensive\b|\bcheap(?:er|est)?\b|\bpa(?:y|id)\b|"
            r"\bfees?\b|\bpremium\b|\bexcess\b|\b(?:big|larg|small)(?:ger|est|er)\b|\bdifference between\b",
            re.IGNORECASE,
        ),
    ),
    (
        Kind.DATE,
        re.compile(
            r"\bdeadline\b|\b(?:most |least )?recent(?:ly)?\b|\b(?:earli|lat|new|old)(?:er|est)\b", re.IGNORECASE
        ),
    ),
]
_FIGURES: dict[Kind, re.Pattern[str]] = {
    Kind.DURATION: re.compile(
        rf"\b(?:\d+(?:[.,]\d+)?|{_NUMBER_WORDS})(?:\s+and\s+a\s+half)?[\s-]+"
        r"(?:minute|hour|day|night|week|month|year|session|evening|weekend)s?\b",
        re.IGNORECASE,
    ),
    Kind.COUNT: re.compile(rf"\b(?:\d+|{_NUMBER_WORDS})\b", re.IGNORECASE),
    Kind.AMOUNT: re.compile(
        # With a currency, or written as money is: 11,930.00, 1,400, 1.35.
        r"[$€£]\s?\d|\d[\d,.]*\s*(?:eur|usd|gbp|euros?|dollars?|pounds?|%)|\b(?:eur|usd|gbp)\s?\d|"
        r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d+\.\d{2}\b",
        re.IGNORECASE,
    ),
    Kind.DATE: re.compile(
        rf"\b\d{{1,2}}\s+(?:{_MONTHS})\b|\b(?:{_MONTHS})\s+\d{{1,2}}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}:\d{{2}}\b|"
        r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|"
        # Recurring and relative dates: "the first day of each month", "every September".
        r"\b(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|last)\s+(?:day|week|working day)\b|"
        rf"\b(?:every|each)\s+(?:day|week|month|year|quarter|{_MONTHS}|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b",
        re.IGNORECASE,
    ),
}
# "How long" asks for a duration; "long" is not a word the answer ("nine nights") repeats.
_HOW = re.compile(r"\bhow (?:long|much|many|often|soon|far|old)\b", re.IGNORECASE)
_OR = re.compile(r"\s+or\s+", re.IGNORECASE)
# Words that make a part compare rather than look up.
_COMPARATIVE = re.compile(
    r"\b(?:more|less|fewer|most|least|(?:long|short|bigg|larg|small|high|low|cheap|old|new|earli|lat)(?:er|est)|"
    r"compar\w*|versus|vs\.?|differ\w*|between)\b",
    re.IGNORECASE,
)
# Comparative words are the question's phrasing, not words a sentence that settles it would use.
_COMPARATIVE_TERMS = frozenset(
    terms(
        "more less fewer most least longer longest shorter shortest bigger biggest larger largest smaller "
        "smallest higher highest lower lowest cheaper cheapest older oldest newer newest earlier earliest "
        "later latest recently recent compare comparison versus differ difference"
    )
)


def question_parts(question: str) -> list[Part]:
    """The parts of `question`, in order; a piece with nothing to look up joins the one before."""
    parts: list[Part] = []
    for piece in _PART_BREAK.split(question.strip()):
        text = piece.strip(" ,.!?")
        if not text:
            continue
        part = Part(
            text=text,
            terms=frozenset(terms(_HOW.sub(" ", text))) - _COMPARATIVE_TERMS,
            kind=next((kind for kind, asks in _ASKS if asks.search(text)), None),
            comparative=bool(_COMPARATIVE.search(text)),
            named=tuple(frozenset(terms(side)) - _COMPARATIVE_TERMS for side in _OR.split(text) if terms(side))
            if _OR.search(text)
            else (),
        )
        if parts and not part.terms and part.kind is None:
            previous = parts.pop()
            part = dataclasses.replace(previous, text=f"{previous.text}, {text}")
        parts.append(part)
    return parts


def looked_up(question: str) -> str:
    """`question` less the way it is put ("how much", "larger", "compared to"): the words a passage
    answering it would hold."""
    return " ".join(_COMPARATIVE.sub(" ", _HOW.sub(" ", question)).split())


def states(kind: Kind, text: str) -> bool:
    """Whether `text` states a figure of `kind` ("twelve days", "3,200 EUR", "15 January")."""
    return bool(_FIGURES[kind].search(text))

"""A question as the parts an answer owes: "which trip is longer, and which has the bigger budget?"
is two parts, each with its own terms and the kind of figure it asks for.

A part starts at a question word after "and", a comma or a semicolon ("..., and who supplies it"),
so "Klara and the Sun" or "tomatoes and stock" stay whole. Comparatives ("longer", "costs more",
"most recently", "which ends first") are not terms a sentence should repeat: they say the part
compares, and what kind of figure settles it (a duration, an amount, a date). Nor are the words
asking for a sum ("the three bills ... in total", "altogether"): the part adds up the figures of
the things it names, as many as it counts.
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
    subject: frozenset[str] = frozenset()  # the kind of thing compared, unless it names them: "which contract"
    total: bool = False  # asks for the sum of the figures of several things ("the bills ... in total")
    count: int | None = None  # how many things it says there are ("the three bills")

    @property
    def per_thing(self) -> bool:
        """Settled by each compared or summed thing's own figure, one per file."""
        return self.comparative or self.total


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
# "How many days" asks for a span of time, which two dates give as well as a stated duration.
_HOW_MANY_UNITS = re.compile(r"\bhow many (?:days|nights|weeks|months|years)\b", re.IGNORECASE)
# "Which contract ends first": the things compared by their dates, earliest (or latest) first.
_ORDERED = re.compile(r"\bwhich\b.*\b(?:first|sooner|soonest|last)\b", re.IGNORECASE)
_ORDER_WORDS = frozenset(terms("first sooner soonest last"))
# "..., and how many days apart": the difference a date comparison states anyway.
_APART = re.compile(
    r"^(?:and\s+)?(?:by\s+)?how (?:many|much) (?:days?|weeks?|months?|years?|time)"
    r"(?:\s+(?:apart|between(?:\s+them)?|earlier|later|sooner))?(?:\s+(?:is|are|was|were)\s+(?:it|they|that))?$",
    re.IGNORECASE,
)
# A sum asked for, of several things: "in total", "altogether", "add up to", "the sum of".
_TOTAL_ASKED = re.compile(
    r"\btotal\b|\baltogether\b|\ball together\b|\bin all\b|\bcombined\b|\badd(?:s|ed)? up\b|\bsum of\b",
    re.IGNORECASE,
)
_SUM_WORDS = frozenset(terms("total altogether together combined sum add cost costs come comes spend spent"))
_COUNTED = re.compile(r"\bthe (two|three|four|five|six|seven|eight|nine|ten|\d{1,2}) ", re.IGNORECASE)
_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
# Several things, so there is something to add up: a plural noun ("the bills") or "A and B"; "how
# much does the course cost in total" asks for one thing's total, not a sum.
_PLURAL = re.compile(r"\b[a-z]{2,}[^\Wsu]s\b|\band\b", re.IGNORECASE)
# "Which contract ends first": a thing compared holds its kind's name; "which ends" names none.
_WHICH = re.compile(r"\bwhich\s+([^\W\d_]+)", re.IGNORECASE)
_NOT_KIND_TEXT = "costs cost ends end starts start begins expires runs comes takes lasts happens pays paid one ones"
_NOT_KINDS = frozenset(_NOT_KIND_TEXT.split())
_NOT_PLURAL_TEXT = "costs comes adds pays runs ends takes makes needs means goes does has was its this"
_NOT_PLURAL = frozenset(_NOT_PLURAL_TEXT.split())
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
    """The parts of `question`, in order; a piece with nothing to look up joins the one before, and
    so does "how many days apart" after a comparison of dates (which states the days between)."""
    parts: list[Part] = []
    for piece in _PART_BREAK.split(question.strip()):
        text = piece.strip(" ,.!?")
        if not text:
            continue
        part = _part(text)
        apart = bool(parts) and parts[-1].kind is Kind.DATE and parts[-1].comparative and _APART.match(text)
        if parts and (apart or (not part.terms and part.kind is None)):
            previous = parts.pop()
            part = dataclasses.replace(previous, text=f"{previous.text}, {text}")
        parts.append(part)
    return parts


def _part(text: str) -> Part:
    ordered = bool(_ORDERED.search(text))
    counted = _COUNTED.search(text)
    total = bool(_TOTAL_ASKED.search(text)) and (bool(counted) or _several(_TOTAL_ASKED.sub(" ", text)))
    dropped = _COMPARATIVE_TERMS | (_ORDER_WORDS if ordered else frozenset()) | (_SUM_WORDS if total else frozenset())
    if total and counted:
        dropped |= frozenset(terms(counted.group(1)))
    # The things named as compared: after the question's own words ("Which costs more, A or B").
    named_text = text.rsplit(",", 1)[-1] if "," in text and _OR.search(text.rsplit(",", 1)[-1]) else text
    named = (
        tuple(frozenset(terms(side)) - dropped for side in _OR.split(named_text) if terms(side))
        if _OR.search(named_text)
        else ()
    )
    which = _WHICH.search(text)
    subject = frozenset(terms(which.group(1))) if which and which.group(1).lower() not in _NOT_KINDS else frozenset()
    kind = Kind.DURATION if _HOW_MANY_UNITS.search(text) else None
    kind = kind or (Kind.DATE if ordered else next((kind for kind, asks in _ASKS if asks.search(text)), None))
    return Part(
        text=text,
        terms=frozenset(terms(_HOW.sub(" ", _HOW_MANY_UNITS.sub(" ", text)))) - dropped,
        kind=Kind.AMOUNT if total and kind is None else kind,
        comparative=ordered or bool(_COMPARATIVE.search(text)),
        named=named,
        subject=frozenset() if named else subject - dropped,
        total=total,
        count=_count(counted.group(1)) if total and counted else None,
    )


def _several(text: str) -> bool:
    return any(match.group(0).lower() not in _NOT_PLURAL for match in _PLURAL.finditer(text))


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _COUNTS[word.lower()]


def looked_up(question: str) -> str:
    """`question` less the way it is put ("how much", "larger", "compared to", "in total", "how
    many days apart"): the words a passage answering it would hold."""
    put = _APART_WORDS.sub(" ", _TOTAL_ASKED.sub(" ", _COMPARATIVE.sub(" ", _HOW.sub(" ", question))))
    return " ".join(put.split())


_APART_WORDS = re.compile(r"\b(?:days|weeks|months) apart\b|\bapart\b", re.IGNORECASE)


def states(kind: Kind, text: str) -> bool:
    """Whether `text` states a figure of `kind` ("twelve days", "3,200 EUR", "15 January")."""
    return bool(_FIGURES[kind].search(text))

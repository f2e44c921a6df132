"""Dates the offline answerer computes with: which of two comes first, and the days between them.

"Which contract ends first, and how many days apart?" is answered by reading each compared file's
date (the one its clause labels with a word of the question, else its first), naming the earlier
(or the later, as asked), the other, and the days between, each date cited. "How long was the
trip?" is answered, when no sentence says how long, by the days between the two dates the trip's
sentences give ("Outbound ... 12 May 2025", "Return ... 16 May 2025"). Only whole dates count
(day, month and year, or an ISO date): "every September" or "3 October" alone are no date to count
from, and a third date makes a span ambiguous, so nothing is computed then.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.translation import gettext, ngettext

from apps.llm.extractive_compare import clause_before, figure, name_of
from apps.llm.extractive_rows import listed
from apps.llm.extractive_text import terms

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_WRITTEN = re.compile(
    rf"\b(?P<day>{_DAY})\s+(?P<month>{_MONTH})(?:,?\s+(?P<year>\d{{4}}))?\b|"
    rf"\b(?P<month2>{_MONTH})\s+(?P<day2>{_DAY})(?:,\s*|\s+)(?P<year2>\d{{4}})\b|"
    r"\b(?P<iso>\d{4}-\d{2}-\d{2})\b|"
    # A range of days in one month: "14 to 21 June 2024", "12-16 May 2025".
    rf"\b(?P<first>\d{{1,2}})\s*(?:to|until|-|\u2013)\s*(?={_DAY}\s+{_MONTH}\s+\d{{4}})",
    re.IGNORECASE,
)
# What may stand between the start of a range and its end: "3 March to 28 March 2025", "14-21 June".
_RANGE = re.compile(r"\s*(?:to|until|till|through|and|-|\u2013)\s*", re.IGNORECASE)
_MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
# The words that ask for the later date first; otherwise the earlier comes first.
_LATER = re.compile(r"\blat(?:er|est)\b|\blast\b|\bnew(?:er|est)\b|\b(?:most )?recent(?:ly)?\b", re.IGNORECASE)


@dataclass(frozen=True)
class Dated:
    day: dt.date
    written: str  # as the document writes it, completed with the year a range gives it
    start: int  # where it starts in its sentence


@dataclass(frozen=True)
class DateSide:
    n: int
    name: str
    dated: Dated


def whole_dates(sentence: str) -> list[Dated]:
    """The whole dates `sentence` states, in order. A day written without its year (or month) as the
    start of a range takes them from the range's end: "from 3 March to 28 March 2025", "14 to 21
    June 2024"."""
    found = [_read(match) for match in _WRITTEN.finditer(sentence)]
    dated: list[Dated] = []
    for index, (start, end, day, month, year, written) in enumerate(found):
        following = found[index + 1] if index + 1 < len(found) else None
        if following and not (month and year) and _RANGE.fullmatch(sentence[end : following[0]]):
            _, _, _, next_month, next_year, _ = following
            if month is None and next_month:
                written = f"{written} {_MONTH_NAMES[next_month - 1]}"
            month, year, written = month or next_month, next_year, f"{written} {next_year}"
        if month and year and (day_of := _date(year, month, day)):
            dated.append(Dated(day=day_of, written=written, start=start))
    return dated


def _read(match: re.Match[str]) -> tuple[int, int, int, int | None, int, str]:
    """start, end, day, month (None: not written), year (0: not written), the text as written."""
    if match.group("iso"):
        iso_year, iso_month, iso_day = (int(number) for number in match.group("iso").split("-"))
        return match.start(), match.end(), iso_day, iso_month, iso_year, match.group(0)
    if match.group("first"):
        return (
            match.start(),
            match.start() + len(match.group("first")),
            int(match.group("first")),
            None,
            0,
            match.group("first"),
        )
    day, month, year = (
        (match.group("day"), match.group("month"), match.group("year"))
        if match.group("day")
        else (match.group("day2"), match.group("month2"), match.group("year2"))
    )
    number = _MONTHS[month.lower().rstrip(".")]
    return match.start(), match.end(), int(re.sub(r"\D", "", day)), number, int(year or 0), match.group(0)


def date_side(
    *, n: int, sentence: str, item: str, wanted: frozenset[str], event: frozenset[str] = frozenset()
) -> DateSide | None:
    """The date `sentence` (from file `item`) states for the part asking about `wanted`: the one
    its clause labels with the part's `event` ("ends" of "which lease ends later": "starts on 1
    April 2023 and ends on 31 March 2026"), else with another word of the part, else its first."""
    dates = whole_dates(sentence)
    if not dates:
        return None
    labels = [set(terms(clause_before(sentence, dated.start))) for dated in dates]
    by_event = [dated for dated, label in zip(dates, labels, strict=True) if event & label]
    labelled = [dated for dated, label in zip(dates, labels, strict=True) if wanted & label]
    return DateSide(n=n, name=name_of(sentence, item), dated=(by_event or labelled or dates)[0])


def date_comparison(*, question: str, sides: Sequence[DateSide]) -> str | None:
    """Which of `sides` (from different files) comes first, or last as `question` asks, against the
    others, with the days between; None when fewer than two things are compared."""
    if len(sides) < 2 or len({entry.name for entry in sides}) < len(sides):
        return None
    later_first = bool(_LATER.search(question))
    ranked = sorted(sides, key=lambda entry: entry.dated.day, reverse=later_first)
    lead, others = ranked[0], ranked[1:]
    if all(entry.dated.day == lead.dated.day for entry in others):
        return gettext("They fall on the same day: %(dates)s.") % {"dates": listed([_dated(entry) for entry in ranked])}
    against = ", ".join(_dated(entry) for entry in others)
    gaps = []
    for entry in others:
        days = abs((lead.dated.day - entry.dated.day).days)
        gap = (
            ngettext("%(count)s day later", "%(count)s days later", days)
            if later_first
            else ngettext("%(count)s day earlier", "%(count)s days earlier", days)
        ) % {"count": figure(days)}
        gaps.append(gettext("%(gap)s than %(name)s") % {"gap": gap, "name": entry.name} if len(others) > 1 else gap)
    text = (
        gettext("%(name)s comes last: %(date)s [%(n)s] against %(others)s, %(gaps)s.")
        if later_first
        else gettext("%(name)s comes first: %(date)s [%(n)s] against %(others)s, %(gaps)s.")
    )
    return text % {
        "name": lead.name,
        "date": lead.dated.written,
        "n": lead.n,
        "others": against,
        "gaps": ", ".join(gaps),
    }


def span(cited: Sequence[tuple[int, str]]) -> str | None:
    """The days between the two whole dates of these `(n, sentence)`s, cited; None unless they
    give exactly two different dates."""
    dates = sorted(
        {dated.day: (n, dated) for n, sentence in cited for dated in whole_dates(sentence)}.values(),
        key=lambda entry: entry[1].day,
    )
    if len(dates) != 2:
        return None
    (first_n, first), (last_n, last) = dates
    days = (last.day - first.day).days
    start = first.written if first_n == last_n else f"{first.written} [{first_n}]"
    return gettext("From %(start)s to %(end)s is %(days)s.") % {
        "start": start,
        "end": f"{last.written} [{last_n}]",
        "days": ngettext("%(count)s day", "%(count)s days", days) % {"count": figure(days)},
    }


def _dated(side: DateSide) -> str:
    return gettext("%(date)s for %(name)s [%(n)s]") % {"date": side.dated.written, "name": side.name, "n": side.n}


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None

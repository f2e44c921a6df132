"""A comparison (or a sum) the offline answerer computes from the sentences it found for each side.

"Which invoice is larger, and by how much?" is answered by arithmetic, not by quoting both sides
and leaving the reader to subtract: each compared file's sentence gives one amount (the one its
clause labels with a word of the question, or a total, else its first), and when the amounts are
in the same currency the answer names the larger (or smaller, as asked), the other, and the
difference, each side cited with the number it was given. Amounts in different currencies are
stated side by side and said to be so, never subtracted; a side with no amount is no comparison.
"What did the three bills cost in total?" is answered the same way: each file's amount, added up
when they are alike (one currency, no rate, one role, as many as the question counts).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.utils.formats import number_format
from django.utils.translation import gettext

from apps.llm.extractive_rows import listed
from apps.llm.extractive_text import terms

# An amount as documents write money: a symbol or code before, a code or word after, or neither
# when the number is written as money is (1,450 or 1450.00).
_MONEY = re.compile(
    r"(?<![\w.,-])(?P<pre>[$€£]\s?|(?:EUR|USD|GBP)\s?)?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w-]|[.,]\d)"
    r"(?P<post>\s*(?:EUR|USD|GBP|euros?|dollars?|pounds?)\b)?",
    re.IGNORECASE,
)
_CURRENCY = {"$": "USD", "€": "EUR", "£": "GBP", "euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD"}
_CURRENCY |= {"pound": "GBP", "pounds": "GBP", "eur": "EUR", "usd": "USD", "gbp": "GBP"}
_SYMBOL = {"USD": "$", "EUR": "€", "GBP": "£"}
# A column or field named for its currency ("amount eur is 1450.00", "Total (EUR): 980.00").
_CURRENCY_WORD = re.compile(r"\b(eur|usd|gbp|euros?|dollars?|pounds?)\b|([$€£])", re.IGNORECASE)
# Where a figure's clause starts: what labels it ("the amount eur is", "Total due:").
_CLAUSE_START = re.compile(r"[,;(]\s*|\band\s+|\bfor\s+", re.IGNORECASE)
# What an amount is per ("1,950 EUR a month", "15 EUR a visit"): part of its unit, so a rate is not
# compared with a one-off price.
_PER = re.compile(
    r"^\s*(?:a|an|per|/|each)\s*(month|year|week|day|night|hour|person|visit|season|session|claim)\b|"
    r"^\s*(monthly|yearly|annually|weekly|daily)\b",
    re.IGNORECASE,
)
_TOTAL = re.compile(r"\btotal\b|\bamount due\b|\bbalance due\b", re.IGNORECASE)
# Figures of different roles are not compared even in one currency ("a deposit" against "a total").
_ROLES = ("total", "subtotal", "deposit", "tax", "vat", "discount", "fee", "balance", "paid")
# A row told as a sentence ("For invoice INV-20917, the ...") names its thing first.
_ROW_NAME = re.compile(r"^For [^,]*?\s(\S+),")
_IDENTIFIER = re.compile(r"\b[A-Z][A-Z0-9]*-\d[\w-]*\b")
# The words that ask for the smaller side, and how each direction is said.
_SMALLER = re.compile(r"\b(?:small|low|short|few)(?:er|est)\b|\bless\b|\bleast\b|\bcheap(?:er|est)\b", re.IGNORECASE)
_PRICE_WORDS = re.compile(r"\bexpensive\b|\bcheap(?:er|est)?\b|\bcosts?\b|\bprices?\b", re.IGNORECASE)
_BIGGER = re.compile(r"\bbigg(?:er|est)\b", re.IGNORECASE)
_HIGHER = re.compile(r"\bhigh(?:er|est)\b|\blow(?:er|est)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Side:
    n: int  # the citation number of the sentence stating it
    name: str  # what the figure is of: a row's key, an identifier, or the file
    value: float
    decimals: int
    currency: str  # "EUR", "USD", "GBP", or "" when the document names none
    symbol: bool  # the document writes the currency as a symbol before the number
    role: str  # "total", "deposit", ... when its label says so
    per: str  # "month", "visit", ... when it is a rate


def side(*, n: int, sentence: str, item: str, wanted: frozenset[str]) -> Side | None:
    """The amount `sentence` (from file `item`) states for the part asking about `wanted`."""
    figures = [match for match in _MONEY.finditer(sentence) if _is_money(match)]
    if not figures:
        return None
    labelled = [match for match in figures if wanted & set(terms(clause_before(sentence, match.start())))]
    totals = [match for match in figures if _TOTAL.search(clause_before(sentence, match.start()))]
    match = (labelled or totals or figures)[0]
    clause = clause_before(sentence, match.start())
    number = match.group("num").replace(",", "")
    marker = (match.group("pre") or match.group("post") or "").strip()
    written = _CURRENCY_WORD.search(marker or clause)
    currency = _CURRENCY.get((written.group(0) if written else "").lower(), "") if written else ""
    per = _PER.match(sentence[match.end() :])
    role = next((word for word in _ROLES if re.search(rf"\b{word}\b", clause, re.IGNORECASE)), "")
    return Side(
        n=n,
        name=name_of(sentence, item),
        value=float(number),
        decimals=len(number.partition(".")[2]),
        currency=currency,
        symbol=bool(match.group("pre")) and match.group("pre").strip() in _SYMBOL.values(),
        role=role,
        per=next((word.lower() for word in (per.groups() if per else ()) if word), ""),
    )


def comparison(*, question: str, sides: Sequence[Side]) -> str | None:
    """The sentence comparing `sides` (two or more, from different files) the way `question` asks
    (larger or smaller first), or None when they are not alike enough to compare: the same thing
    twice, figures of different roles ("deposit", "total"), or rates of different periods."""
    if len(sides) < 2 or len({entry.name for entry in sides}) < len(sides):
        return None
    if len({entry.role for entry in sides if entry.role}) > 1 or len({entry.per for entry in sides}) > 1:
        return None
    currencies = {entry.currency for entry in sides}
    if len(currencies) > 1:
        # One side naming no currency is no evidence it is another: only named ones must differ.
        if len(currencies - {""}) > 1:
            stated = [
                gettext("%(name)s is %(amount)s [%(n)s]")
                % {"name": entry.name, "amount": _amount(entry.value, entry, entry.decimals), "n": entry.n}
                for entry in sides
            ]
            return gettext("%(amounts)s: they are in different currencies, so I have not compared them.") % {
                "amounts": listed(stated)
            }
        return None
    smaller_first = bool(_SMALLER.search(question))
    ranked = sorted(sides, key=lambda entry: entry.value, reverse=not smaller_first)
    lead, others = ranked[0], ranked[1:]
    decimals = max(entry.decimals for entry in sides)
    if all(entry.value == lead.value for entry in others):
        return gettext("They are the same: %(amounts)s.") % {
            "amounts": listed([_for(entry, decimals) for entry in ranked])
        }
    differences = []
    for entry in others:
        difference = _amount(abs(lead.value - entry.value), lead, decimals)
        if len(others) == 1:
            said = gettext("%(amount)s less") if smaller_first else gettext("%(amount)s more")
        else:
            said = (
                gettext("%(amount)s less than %(name)s") if smaller_first else gettext("%(amount)s more than %(name)s")
            )
        differences.append(said % {"amount": difference, "name": entry.name})
    return _lead_sentence(question, smaller_first=smaller_first) % {
        "name": lead.name,
        "amount": _amount(lead.value, lead, decimals),
        "n": lead.n,
        "others": ", ".join(_for(entry, decimals, style=lead) for entry in others),
        "differences": ", ".join(differences),
    }


def total(*, sides: Sequence[Side], count: int | None) -> str | None:
    """The sum of `sides` (amounts of different things), each cited; None unless they are alike
    (one currency, one role, no rate) and as many as the question counts, if it counts them."""
    if len(sides) < 2 or len({entry.name for entry in sides}) < len(sides) or count not in (None, len(sides)):
        return None
    if len({entry.role for entry in sides if entry.role}) > 1 or any(entry.per for entry in sides):
        return None
    decimals = max(entry.decimals for entry in sides)
    parts = [_for(entry, decimals) for entry in sides]
    if len({entry.currency for entry in sides}) > 1:
        if len({entry.currency for entry in sides} - {""}) > 1:
            return gettext("%(amounts)s: they are in different currencies, so I have not added them up.") % {
                "amounts": listed(parts)
            }
        return None  # one names no currency: no evidence it is the others'
    amount = _amount(round(sum(entry.value for entry in sides), decimals), sides[0], decimals)
    return gettext("Together they come to %(total)s: %(amounts)s.") % {"total": amount, "amounts": listed(parts)}


def is_total(sentence: str) -> bool:
    return bool(_TOTAL.search(sentence))


def _lead_sentence(question: str, *, smaller_first: bool) -> str:
    """The sentence naming the side asked for, in the question's own word for the direction."""
    if _PRICE_WORDS.search(question):
        if smaller_first:
            return gettext("%(name)s is cheaper: %(amount)s [%(n)s] against %(others)s, %(differences)s.")
        return gettext("%(name)s is more expensive: %(amount)s [%(n)s] against %(others)s, %(differences)s.")
    if _HIGHER.search(question):
        if smaller_first:
            return gettext("%(name)s is lower: %(amount)s [%(n)s] against %(others)s, %(differences)s.")
        return gettext("%(name)s is higher: %(amount)s [%(n)s] against %(others)s, %(differences)s.")
    if _BIGGER.search(question) and not smaller_first:
        return gettext("%(name)s is bigger: %(amount)s [%(n)s] against %(others)s, %(differences)s.")
    if smaller_first:
        return gettext("%(name)s is smaller: %(amount)s [%(n)s] against %(others)s, %(differences)s.")
    return gettext("%(name)s is larger: %(amount)s [%(n)s] against %(others)s, %(differences)s.")


def _for(entry: Side, decimals: int, *, style: Side | None = None) -> str:
    """ "1,450.00 EUR for INV-20917 [1]": one side's amount, cited (in `style`'s currency writing)."""
    return gettext("%(amount)s for %(name)s [%(n)s]") % {
        "amount": _amount(entry.value, style or entry, decimals),
        "name": entry.name,
        "n": entry.n,
    }


def figure(number: Decimal | int, decimals: int = 0) -> str:
    """A computed number in the reader's digits: the active language's grouping and decimal mark
    (2,300.00 in English, 2.300,00 in German)."""
    return number_format(number, decimal_pos=decimals, force_grouping=True)


def _amount(value: float, style: Side, decimals: int) -> str:
    # Rounded before formatting: number_format cuts extra decimals off (230.1999... would be 230.19).
    number = figure(Decimal(f"{value:.{decimals}f}"), decimals)
    if not style.currency:
        return number
    return f"{_SYMBOL[style.currency]}{number}" if style.symbol else f"{number} {style.currency}"


def _is_money(match: re.Match[str]) -> bool:
    if match.group("pre") or match.group("post"):
        return True
    # Written as money is (1,450 or 1450.00); a bare count or year ("12 pieces", "2024") is not.
    number = match.group("num")
    return "," in number or bool(re.fullmatch(r"\d+\.\d{2}", number))


def clause_before(sentence: str, position: int) -> str:
    """The clause that labels the figure at `position`: the text before it back to a clause start."""
    before = sentence[:position]
    starts = [start.end() for start in _CLAUSE_START.finditer(before)]
    return before[starts[-1] if starts else 0 :]


def name_of(sentence: str, item: str) -> str:
    """What a figure of `sentence` (from file `item`) is of: a row's key, an identifier, or the file."""
    row = _ROW_NAME.match(sentence)
    if row:
        return row.group(1)
    for text in (sentence, item.rsplit("/", 1)[-1]):
        identifier = _IDENTIFIER.search(text)
        if identifier:
            return identifier.group(0)
    return item.rsplit("/", 1)[-1]

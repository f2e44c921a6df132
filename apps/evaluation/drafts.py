"""Questions written without a model from one passage, each with the fact that answers it:

- a field or a table row (`Total due ........ 2,300.00 EUR`, `Rent: 1,200 EUR`, `Total due | 2,300.00`)
  -> "What is the total due in invoice.txt?", the fact its figure ("2,300.00"), date or short value;
- a record of a table (`invoice: INV-20917 | ... | amount_eur: 1450.00`) -> "What is the amount eur
  of INV-20917 in invoices.csv?";
- a section's heading -> "What does budget.md say about fixed costs?", the fact the section's first
  figure or date when it has one;
- a sentence stating an amount, a date or a share -> the sentence asked back with that part
  replaced: "According to policy.md, the policy renews on what date?";
- the document's title, when nothing else: "What does lease.docx say about lease renewal 2025?".

The templates are in the active language (`gettext`); what they quote (a label, a clause, a name)
stays as the file writes it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from django.utils.translation import gettext

from apps.evaluation.passages import Passage

MAX_QUESTION_WORDS = 40
MAX_LABEL_WORDS = 8
MAX_VALUE_WORDS = 5
# A field's value longer than this is prose (`Alex: deliver the final illustrations by 6 December.`).
MAX_FIELD_WORDS = 12
MIN_SENTENCE_WORDS = 6

_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CURRENCY = r"EUR|USD|GBP|CHF|dollars?|euros?|pounds?|€|\$|£"
# What a fact may be, most telling first: an amount, a date, a share.
_MONEY = re.compile(rf"(?<![\w.,])(?:[$€£]\s?(?P<a>{_NUMBER})|(?P<b>{_NUMBER})\s?(?:{_CURRENCY})(?!\w))", re.IGNORECASE)
_DATE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}(?:\s+\d{{4}})?|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}})?|"
    rf"\d{{4}}-\d{{2}}-\d{{2}})\b"
)
_MONTH = re.compile(rf"\b{_MONTHS}\s+\d{{4}}\b")
_PERCENT = re.compile(rf"(?<![\w.,])(?:{_NUMBER})\s?%")
_LEADER = re.compile(r"\s*(?:\.{4,}|…{2,}|(?:\.\s){3,}\.?|_{4,})\s*")
_FIELD = re.compile(r"^(?P<label>[^:|.!?]{2,60}?)\s*:\s+(?P<value>\S.*)$")
_JSON_FIELD = re.compile(r"^[^:\s]+[\].](?P<label>[^\].\[:\s]+):\s+(?P<value>\S.*)$")
_NAME_FIELDS = {"name", "title", "id", "code"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
# Labels that name no thing asked about: a letter's headers.
_NO_QUESTION_LABELS = {"from", "to", "cc", "bcc", "re", "subject", "columns", "note", "notes", "see"}
# A sentence's first word, lower-cased when the sentence is asked back in the middle of a question.
_COMMON_STARTS = {
    "a", "an", "the", "this", "that", "these", "those", "our", "we", "it", "its", "they", "their",
    "there", "each", "every", "all", "one", "both", "he", "she", "his", "her", "my", "i", "you", "your",
}  # fmt: skip


@dataclass(frozen=True)
class Draft:
    kind: str  # field, row, record, heading, sentence, title
    question: str
    facts: tuple[str, ...]
    excerpt: str  # the line or sentence it came from


def passage_drafts(passage: Passage) -> list[Draft]:
    """Every question this passage can give, the title's last (it is asked only failing the rest)."""
    file = passage.name
    drafts = [*_line_drafts(passage.lines, file), *_sentence_drafts(passage.lines, file)]
    body = [line for line in passage.lines if len(line.split()) >= 4]
    if passage.heading and body:
        fact = next((found for line in passage.lines for found in [_fact(line, strict=True)] if found), None)
        topic = _phrase(passage.heading.rstrip(":"))
        question = gettext("What does %(file)s say about %(topic)s?") % {"file": file, "topic": topic}
        drafts.append(Draft("title" if passage.is_title else "heading", question, _some(fact), passage.heading))
    return [draft for draft in drafts if len(draft.question.split()) <= MAX_QUESTION_WORDS]


def _some(fact: str | None) -> tuple[str, ...]:
    return (fact,) if fact else ()


def _line_drafts(lines: Sequence[str], file: str) -> Iterator[Draft]:
    fields = [found for found in map(_JSON_FIELD.match, lines) if found]
    if len(fields) == len(lines) > 1:
        yield from _json_record([(found.group("label"), found.group("value")) for found in fields], file)
        return
    table = [_cells(line) for line in lines]
    header: list[str] | None = None
    for line, cells, below in zip(lines, table, [*table[1:], []], strict=True):
        if header is not None and len(cells) == len(header):
            yield from _table_row(header, cells, line, file)
            continue
        # A table of three or more columns: its first row names them.
        header = cells if len(cells) >= 3 and len(below) == len(cells) else None
        if header is not None:
            continue
        elif " | " in line and all(_FIELD.match(piece.strip()) for piece in line.split(" | ")):
            yield from _record(line, file)
        elif len(cells) == 2:
            yield from _field(cells[0], cells[1], line, file)
        elif found := _FIELD.match(_LEADER.sub(": ", line, count=1)):
            yield from _field(found.group("label"), found.group("value"), line, file)


def _cells(line: str) -> list[str]:
    if "|" in line:
        return [cell.strip() for cell in line.strip().strip("|").split("|")]
    if _LEADER.search(line):
        parts = [part for part in _LEADER.split(line.strip(), maxsplit=1) if part]
        return parts if len(parts) == 2 else []
    return []


def _field(label: str, value: str, line: str, file: str) -> Iterator[Draft]:
    label = label.strip()
    if not _askable_label(label) or (value.rstrip().endswith(".") and len(value.split()) >= 4):
        return  # a sentence after a name and a colon ("Alex: deliver the illustrations by Friday.")
    fact = _fact(value)
    if fact:
        yield Draft("field", _field_question(_phrase(label), file), (fact,), line)


def _table_row(header: Sequence[str], cells: Sequence[str], line: str, file: str) -> Iterator[Draft]:
    """`Completion | 61% | 78%` under `Metric | Q3 | Q4`: the first cell is the row's label."""
    label = cells[0]
    if not _askable_label(label):
        return
    for column, value in zip(header[1:], cells[1:], strict=False):
        fact = _fact(value)
        if fact and column:
            question = gettext("What is the %(column)s %(label)s in %(file)s?") % {
                "column": column,
                "label": _phrase(label),
                "file": file,
            }
            yield Draft("row", question, (fact,), line)


def _record(line: str, file: str) -> Iterator[Draft]:
    pairs = [(found.group("label").strip(), found.group("value").strip()) for piece in line.split(" | ")
             for found in [_FIELD.match(piece.strip())] if found]  # fmt: skip
    (_key, name), rest = pairs[0], pairs[1:]
    for column, value in rest:
        fact = _fact(value)
        if fact and _askable_label(column) and fact != name:
            question = _record_question(_phrase(column.replace("_", " ")), name, file)
            yield Draft("record", question, (fact,), line)


def _json_record(fields: Sequence[tuple[str, str]], file: str) -> Iterator[Draft]:
    """A flattened JSON object's fields (`contacts[1].phone: +1 555 0147`), known by its name."""
    name = next((value for label, value in fields if label.casefold() in _NAME_FIELDS), fields[0][1])
    for label, value in fields:
        fact = _fact(value)
        if fact and value != name and _askable_label(label):
            question = _record_question(_phrase(label.replace("_", " ")), name, file)
            yield Draft("record", question, (fact,), f"{label}: {value}")


def _field_question(label: str, file: str) -> str:
    return gettext("What is the %(label)s in %(file)s?") % {"label": label, "file": file}


def _record_question(label: str, name: str, file: str) -> str:
    return gettext("What is the %(label)s of %(name)s in %(file)s?") % {"label": label, "name": name, "file": file}


def _askable_label(label: str) -> bool:
    words = label.split()
    return (
        0 < len(words) <= MAX_LABEL_WORDS
        and label.casefold() not in _NO_QUESTION_LABELS
        and any(character.isalpha() for character in label)
    )


def _fact(value: str, *, strict: bool = False) -> str | None:
    """What answers a question about `value`: its amount's figure, its date, its share, or (not
    `strict`) a short value as a whole. A value that is a whole sentence or list answers nothing."""
    if not strict and len(value.split()) > MAX_FIELD_WORDS:
        return None
    if money := _MONEY.search(value):
        return money.group("a") or money.group("b")
    for pattern in (_DATE, _MONTH, _PERCENT):
        if found := pattern.search(value):
            return found.group(0)
    value = value.strip().rstrip(".;,")
    if not strict and 0 < len(value.split()) <= MAX_VALUE_WORDS and len(value) <= 60:
        return value
    return None


def _sentence_drafts(lines: Sequence[str], file: str) -> Iterator[Draft]:
    prose = " ".join(line for line in lines if not _cells(line) and not _FIELD.match(line))
    for sentence in _SENTENCE_END.split(prose):
        sentence = sentence.strip()
        if not sentence.endswith((".", "!", "?")) or sentence.endswith("?"):
            continue
        for clause in sentence.rstrip(".!").split("; "):
            draft = _cloze(clause.strip(), sentence, file)
            if draft is not None:
                yield draft
                break


def _cloze(clause: str, sentence: str, file: str) -> Draft | None:
    """The clause asked back with its amount, date or share replaced by what asks for it."""
    if len(clause.split()) < MIN_SENTENCE_WORDS:
        return None
    for pattern in (_MONEY, _DATE, _MONTH, _PERCENT):
        found = next((match for match in pattern.finditer(clause) if not _aside(clause, match)), None)
        if found is None:
            continue
        fact = (found.group("a") or found.group("b")) if pattern is _MONEY else found.group(0)
        before = clause[: found.start()].rstrip()
        if before.endswith(":") and _askable_label(before[:-1]):  # a field written as a sentence
            return Draft("field", _field_question(_phrase(before[:-1]), file), (fact,), sentence)
        first, space, rest = before.partition(" ")
        if first and _common_word(first, sentence):
            before = f"{first[:1].lower()}{first[1:]}{space}{rest}"
        after = clause[found.end() :].rstrip()
        question = _cloze_question(pattern, opening=bool(before)) % {"file": file, "before": before, "after": after}
        return Draft("sentence", question, (fact,), sentence)
    return None


def _cloze_question(pattern: re.Pattern[str], *, opening: bool) -> str:
    """The question a clause is asked back in, by what its gap held; whole sentences, so that a
    translation may put the asking words where its language does ("…" where the gap was)."""
    if pattern is _MONEY:
        if opening:
            return gettext("According to %(file)s, %(before)s how much%(after)s?")
        return gettext("According to %(file)s, how much%(after)s?")
    if pattern is _DATE:
        if opening:
            return gettext("According to %(file)s, %(before)s what date%(after)s?")
        return gettext("According to %(file)s, what date%(after)s?")
    if pattern is _MONTH:
        if opening:
            return gettext("According to %(file)s, %(before)s what month%(after)s?")
        return gettext("According to %(file)s, what month%(after)s?")
    if opening:
        return gettext("According to %(file)s, %(before)s what share%(after)s?")
    return gettext("According to %(file)s, what share%(after)s?")


def _aside(text: str, match: re.Match[str]) -> bool:
    """Inside parentheses: a detail of the sentence, not what it says."""
    return text[: match.start()].count("(") > text[: match.start()].count(")")


def _common_word(word: str, sentence: str) -> bool:
    """A sentence's capitalised first word that is no name: a common start, a word of a common
    ending, or written in lower case elsewhere in the sentence."""
    lowered = word.casefold()
    return (
        lowered in _COMMON_STARTS
        or (word[1:].islower() and lowered.endswith(("ly", "ing", "ed", "tion", "ment", "ness")))
        or re.search(rf"\b{re.escape(lowered)}\b", sentence[len(word) :]) is not None
    )


def _phrase(text: str) -> str:
    """A heading or label inside a question: lower-cased when written in sentence case
    ("Lease renewal" -> "lease renewal"), kept when it holds names ("Project Atlas")."""
    text = " ".join(text.split())
    words = text.split()
    if words and words[0][:1].isupper() and words[0][1:].islower() and not any(w[:1].isupper() for w in words[1:]):
        return text[:1].lower() + text[1:]
    return text

"""Table rows and field lists as sentences the offline answerer can quote.

The parsers render a CSV/xlsx row as `title: Piranesi | author: Susanna Clarke | rating: 4` under a
`Columns: ...` line, and JSON as `contacts[1].name: Maria Okafor` lines. Quoted raw, a table chunk
is one run-on "sentence" of every row. Here each row (or each JSON object's consecutive fields)
becomes one sentence naming its columns, "For title Piranesi, the author is Susanna Clarke and the
rating is 4.", and each `label: value` line of a field list (a W-2, an invoice header), and each
priced line of a receipt ("TOTAL EUR 27.20"), a sentence of its own instead of being run together
with its neighbours.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from django.utils.translation import get_language, gettext

# A `label: value` line: a short label without sentence punctuation, then a value.
# A dot inside a label is a JSON path's (`contacts[1].name`), not a full stop.
_FIELD = re.compile(r"^((?:[^:|.!?]|\.(?=\S)){1,60}?):\s+(\S.*)$")
# A receipt's or a bill's line, as OCR reads it: a short label, then an amount with its cents.
_PRICED = re.compile(r"^[^.!?:|]{1,60}?\s[-+]?[$€£]?\d{1,3}(?:[,.]?\d{3})*[.,]\d{2}$")
# Lines the parsers write above rows: a header names the columns every row repeats, so it says
# nothing of its own; a sheet name is context, kept as a heading by the caller.
_COLUMNS = re.compile(r"^Columns:\s")
_ROW_SEPARATOR = " | "
# A table's leader dots between a label and its value ("Total due ........ 2,300.00 EUR"): layout,
# read as the `label: value` it stands for, and never quoted.
_LEADER = re.compile(r"\s*(?:\.{4,}|…{2,}|(?:\.\s){3,}\.?|_{4,})\s*")
# JSON keys as the parser flattens them: `contacts[1].name` is field `name` of record `contacts[1]`.
_JSON_KEY = re.compile(r"^(.*[\].])([^\].\[]+)$")


@dataclass(frozen=True)
class Block:
    text: str
    told: bool  # already one sentence (a row or a field); otherwise prose still to be split


def is_field_list(lines: Sequence[str]) -> bool:
    """Whether these lines are `label: value` fields (two or more), or one table row."""
    return sum(bool(_FIELD.match(line)) for line in lines) >= 2 or any(len(row_pairs(line)) >= 2 for line in lines)


def blocks(lines: Sequence[str]) -> Iterator[Block]:
    """A paragraph's lines as told records and runs of prose, in order."""
    fields = sum(bool(_FIELD.match(line)) for line in lines)
    priced = sum(bool(_PRICED.match(line.strip())) for line in lines)
    prose: list[str] = []
    record: list[tuple[str, str]] = []
    record_key = ""

    def flush_prose() -> Iterator[Block]:
        if prose:
            yield Block("\n".join(prose), told=False)
            prose.clear()

    def flush_record() -> Iterator[Block]:
        if record:
            yield Block(record_sentence(record), told=True)
            record.clear()

    for line in lines:
        if has_leader(line):
            # A label and its value across leader dots is one line of a list, never run together.
            yield from flush_record()
            yield from flush_prose()
            yield Block(_as_sentence(unleader(line)), told=True)
            continue
        pairs = row_pairs(line)
        json_key = _JSON_KEY.match(pairs[0][0]) if len(pairs) == 1 else None
        if _COLUMNS.match(line):
            yield from flush_record()
            yield from flush_prose()
        elif len(pairs) >= 2:
            yield from flush_record()
            yield from flush_prose()
            yield Block(record_sentence(pairs), told=True)
        elif json_key:
            yield from flush_prose()
            if json_key.group(1) != record_key:
                yield from flush_record()
                record_key = json_key.group(1)
            record.append((json_key.group(2), pairs[0][1]))
        elif (pairs and fields >= 2) or (priced >= 2 and _PRICED.match(line.strip())):
            # One field (or priced line) of a list of them: it stands alone rather than running
            # into the next line.
            yield from flush_record()
            yield from flush_prose()
            yield Block(_as_sentence(line.strip()), told=True)
        else:
            yield from flush_record()
            prose.append(line)
    yield from flush_record()
    yield from flush_prose()


def has_leader(line: str) -> bool:
    return bool(_LEADER.search(line))


def unleader(line: str) -> str:
    """`line` with its leader dots read as `label: value` ("Total due: 2,300.00 EUR"), or dropped
    where nothing follows them."""
    text = line.strip()
    return _LEADER.sub(lambda dots: ": " if dots.start() > 0 and dots.end() < len(text) else "", text).strip()


def row_pairs(line: str) -> list[tuple[str, str]]:
    """`key: value` pairs of a row line (`a: 1 | b: 2`) or of a single field line; [] for prose."""
    pieces = line.strip().split(_ROW_SEPARATOR)
    matches = [_FIELD.match(piece.strip()) for piece in pieces]
    if not all(matches):
        return []
    return [(match.group(1).strip(), match.group(2).strip()) for match in matches if match]


def record_sentence(pairs: Sequence[tuple[str, str]]) -> str:
    """`[(title, Piranesi), (rating, 4)]` -> "For title Piranesi, the rating is 4.", in the asker's
    language (the column names and cells stay as the file writes them)."""
    (key, value), rest = pairs[0], pairs[1:]
    if not rest:
        sentence = gettext("The %(column)s are %(value)s.") if _plural(key) else gettext("The %(column)s is %(value)s.")
        return sentence % {"column": _column(key), "value": _value(value)}
    told = [
        (gettext("the %(column)s are %(value)s") if _plural(name) else gettext("the %(column)s is %(value)s"))
        % {"column": _column(name), "value": _value(cell)}
        for name, cell in rest
    ]
    return gettext("For %(column)s %(value)s, %(told)s.") % {
        "column": _column(key),
        "value": _value(value),
        "told": listed(told),
    }


def listed(items: Sequence[str]) -> str:
    """ "a, b and c", in the asker's language."""
    if len(items) == 1:
        return items[0]
    return gettext("%(items)s and %(last)s") % {"items": ", ".join(items[:-1]), "last": items[-1]}


def _column(name: str) -> str:
    words = " ".join(re.sub(r"[_\-]+", " ", name).split())
    # "the rating" in English; German capitalises its nouns, and the others keep the file's writing.
    return words.lower() if (get_language() or "en").startswith("en") else words


def _plural(name: str) -> bool:
    # "the notes are", "the status is": a plural column name reads wrong with "is" (English only;
    # the other languages' catalogs give both forms one translation).
    last = _column(name).rsplit(" ", 1)[-1]
    return last.endswith("s") and not last.endswith(("ss", "us", "is"))


def _value(value: str) -> str:
    # The sentence adds its own full stop; a cell's own would make two.
    return value.rstrip(" .")


def _as_sentence(line: str) -> str:
    return line if re.search(r"[.!?…]$", line) else f"{line}."

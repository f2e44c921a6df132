"""The passages a generated evaluation set draws its questions from: a seeded sample of a folder's
indexed chunks, each cut into passages (a paragraph under its heading; each record of a table of
records on its own), with boilerplate left out: very short passages, mostly numbers, navigation.

Chunks overlap, so the same paragraph can come twice: a passage is known by its normalised text
(`Passage.key`), and one passage gives at most one question.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from apps.library.models import Chunk, File, FileStatus

# Files read for one generated set: enough to spread it, bounded for a folder of thousands.
MAX_FILES_SAMPLED = 200
# Chunks read per sampled file: enough for about twice the questions asked, within these bounds.
MIN_CHUNKS_PER_FILE = 2
MAX_CHUNKS_PER_FILE = 20
MIN_WORDS = 3
# Below this share of letters among letters and digits, a passage is a table of figures or codes.
MIN_LETTER_SHARE = 0.35

_MARKDOWN_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$")
_LIST_MARK = re.compile(r"^(?:[-*+•]\s+(?:\[[ xX]\]\s+)?|\d{1,2}[.)]\s+)")
_MARKDOWN_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?$")
_RECORD_PAIR = re.compile(r"^[^:|]{1,60}:\s+\S")
# A flattened JSON record's field: `contacts[1].name: Maria Okafor` is `name` of `contacts[1]`.
_JSON_FIELD = re.compile(r"^([^:\s]+[\].])[^\].\[:\s]+:\s+\S")
# The line a table's parser writes above its rows, naming the columns each row repeats.
_COLUMNS = re.compile(r"^Columns:\s")
_WORD = re.compile(r"\w+")
_NAVIGATION = re.compile(
    r"\b(?:skip to (?:main )?content|all rights reserved|cookie(?:s| policy| settings)|privacy policy|"
    r"terms of (?:use|service)|back to top|main menu|sign in|log in|sign up|subscribe)\b|©",
    re.IGNORECASE,
)
_URL_ONLY = re.compile(r"^(?:https?://|www\.)\S+$")


@dataclass(frozen=True)
class Passage:
    file_id: int
    path: str
    name: str
    chunk_index: int
    location: dict[str, Any]  # the chunk's (page, sheet and range, heading path), offsets left out
    heading: str  # the heading the passage sits under; "" for none
    is_title: bool  # that heading is the document's title
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def key(self) -> str:
        return " ".join(_WORD.findall(self.text.casefold()))


def folder_passages(*, folder_id: int, rng: random.Random, questions: int) -> list[list[Passage]]:
    """A sample of the folder's indexed files, in a seeded order, each with the passages of a seeded
    sample of its chunks, shuffled; files without a usable passage are left out."""
    indexed = File.objects.filter(folder_id=folder_id, status=FileStatus.INDEXED, chunk_count__gt=0)
    # Ids alone, then the sample's details: a folder of many thousand files costs a list of ints.
    ids = list(indexed.order_by("pk").values_list("pk", flat=True))
    rng.shuffle(ids)
    ids = ids[: min(MAX_FILES_SAMPLED, max(questions * 4, 20))]
    if not ids:
        return []
    details = {row[0]: row for row in indexed.filter(pk__in=ids).values_list("pk", "path", "name", "chunk_count")}
    files = [details[file_id] for file_id in ids if file_id in details]
    per_file = min(MAX_CHUNKS_PER_FILE, max(MIN_CHUNKS_PER_FILE, math.ceil(questions * 2 / len(files))))
    wanted = Q()
    for file_id, _path, _name, chunk_count in files:
        wanted |= Q(file_id=file_id, chunk_index__in=rng.sample(range(chunk_count), min(per_file, chunk_count)))
    chunks: dict[int, list[tuple[int, str, dict[str, Any]]]] = {}
    rows = Chunk.objects.filter(folder_id=folder_id).filter(wanted).order_by("file_id", "chunk_index")
    for file_id, chunk_index, text, location in rows.values_list("file_id", "chunk_index", "text", "location"):
        chunks.setdefault(file_id, []).append((chunk_index, text, location or {}))
    sampled = []
    for file_id, path, name, _count in files:
        passages = [
            Passage(file_id, path, name, chunk_index, _place(location), heading, is_title, lines)
            for chunk_index, text, location in chunks.get(file_id, [])
            for heading, is_title, lines in chunk_passages(text=text, location=location)
        ]
        rng.shuffle(passages)
        if passages:
            sampled.append(passages)
    return sampled


def _place(location: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in location.items() if key not in ("char_start", "char_end")}


def chunk_passages(*, text: str, location: dict[str, Any]) -> Iterator[tuple[str, bool, tuple[str, ...]]]:
    """(heading, heading is the title, lines) of each passage of a chunk that is not boilerplate."""
    path = [str(part) for part in location.get("heading") or []]
    title = path[0] if path else ""
    heading = path[-1] if path else ""
    lines = [line.strip() for line in text.splitlines()]
    paragraph: list[str] = []
    for number, line in enumerate(lines):
        found = _MARKDOWN_HEADING.match(line)
        named = found.group(1).strip() if found else None
        if named is None and line and (line == title or _plain_heading(line, lines[number + 1 :])):
            named = line
        if named is not None or not line:
            yield from _usable(heading, bool(heading) and heading == title, paragraph)
            paragraph = []
            if named is not None:
                heading = named
            continue
        paragraph.append(_LIST_MARK.sub("", line))
    yield from _usable(heading, bool(heading) and heading == title, paragraph)


def _plain_heading(line: str, after: Sequence[str]) -> bool:
    """A short line without end punctuation above a line of prose: a heading of a document whose
    headings are plain paragraphs (Word, PDF)."""
    following = next((later for later in after if later), "")
    return (
        0 < len(line.split()) <= 6
        and line[:1].isupper()
        and line[-1] not in ".:;,!?"
        and not any(mark in line for mark in (":", "|", "...", "…"))
        and not re.search(r"\d[.,]\d+\W*\w*$", line)  # a label and its amount, as a bill's last line
        and len(following.split()) >= 6
        and "|" not in following
    )


def _usable(heading: str, is_title: bool, lines: list[str]) -> Iterator[tuple[str, bool, tuple[str, ...]]]:
    lines = [line for line in lines if line and not _MARKDOWN_RULE.match(line) and not _URL_ONLY.match(line)]
    if (
        not lines
        or any(_NAVIGATION.search(line) for line in lines)
        or sum(map(_navigation_bar, lines)) * 2 > len(lines)
    ):
        return
    lines = [line for line in lines if not _navigation_bar(line)]
    for group in _records(lines):
        text = " ".join(group)
        letters = sum(character.isalpha() for character in text)
        digits = sum(character.isdigit() for character in text)
        if len(_WORD.findall(text)) >= MIN_WORDS and letters >= MIN_LETTER_SHARE * (letters + digits):
            yield heading, is_title, tuple(group)


def _navigation_bar(line: str) -> bool:
    """`Home | About | Contact`: three or more short cells with no figure and no field."""
    cells = [cell.strip() for cell in line.strip("|").split("|")]
    return len(cells) >= 3 and all(len(cell.split()) <= 3 and not re.search(r"[\d:]", cell) for cell in cells)


def _records(lines: list[str]) -> Iterator[list[str]]:
    """A paragraph, or each record of one that is a table of records: its rows written as
    `column: value | column: value` (sheets, CSV) or its flattened JSON objects' fields."""
    rows = [line for line in lines if not _COLUMNS.match(line)]
    if rows and all(_is_record_row(line) for line in rows):
        yield from ([line] for line in rows)
        return
    prefixes = [_JSON_FIELD.match(line) for line in lines]
    if len(lines) > 1 and all(prefixes):
        groups: dict[str, list[str]] = {}
        for line, prefix in zip(lines, prefixes, strict=True):
            groups.setdefault(prefix.group(1) if prefix else "", []).append(line)
        yield from groups.values()
        return
    yield lines


def _is_record_row(line: str) -> bool:
    pieces = line.split(" | ")
    return len(pieces) >= 2 and all(_RECORD_PAIR.match(piece.strip()) for piece in pieces)

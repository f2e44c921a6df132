"""Token-aware chunking that keeps where each chunk came from (page, heading path, offsets).

The whole document is tokenized once (token character spans), then cut into windows of at most
``CHUNK_TOKENS``: a window ends at a section start (heading, page) when one falls in its second
half, else at the last sentence or line end there, else at the token limit. Consecutive windows
overlap by ``CHUNK_OVERLAP_TOKENS`` except across section starts. A chunk's text is always
``document.text[char_start:char_end]``.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from typing import Any, Protocol

from django.conf import settings
from django.utils.translation import gettext_noop

from apps.core.stored_messages import StoredMessage
from apps.embeddings.providers import get_embedder
from apps.library.budget import budget_check
from apps.library.parsing import ParsedDocument

# The stage a file's time budget names when it runs out here.
CHUNKING = StoredMessage(gettext_noop("chunking"))

# Where a chunk may end, best first: a sentence, paragraph or list item ends; any line ends
# (hard-wrapped prose breaks lines mid-sentence, so these come second).
_STRONG_BREAK = re.compile(r"[.!?;:][\"')\]]*(?=\s)|\n(?=[ \t]*(?:\n|[-*+#|>]|\d+[.)] ))")
_WEAK_BREAK = re.compile(r"\n")


@dataclass(frozen=True)
class ChunkPiece:
    index: int
    text: str
    token_count: int
    location: dict[str, Any]


class Tokenizer(Protocol):
    # Tokens added around every input by the model ([CLS], [SEP]): they share its window.
    special_tokens: int

    def spans(self, text: str) -> tuple[list[int], list[int]]:
        """Start and end character offsets of each token."""
        ...


class RegexTokenizer:
    """Words and punctuation marks: close to a word-piece count for prose, with no model."""

    special_tokens = 0
    _TOKEN = re.compile(r"\w+|[^\w\s]")

    def spans(self, text: str) -> tuple[list[int], list[int]]:
        spans = [match.span() for match in self._TOKEN.finditer(text)]
        return [span[0] for span in spans], [span[1] for span in spans]


class ModelTokenizer:
    """The embedding model's own tokenizer, so chunk sizes match the model's window exactly."""

    special_tokens = 2

    def __init__(self, tokenizer: Any) -> None:
        from tokenizers import Tokenizer as RustTokenizer

        # A private copy (of a `tokenizers.Tokenizer`): the model's instance carries truncation and
        # padding state that encoding changes.
        self._tokenizer = RustTokenizer.from_str(tokenizer.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def spans(self, text: str) -> tuple[list[int], list[int]]:
        offsets = self._tokenizer.encode(text, add_special_tokens=False).offsets
        return [offset[0] for offset in offsets], [offset[1] for offset in offsets]


@functools.cache
def _tokenizer_for(embedder_name: str) -> Tokenizer:
    model_tokenizer = getattr(get_embedder(embedder_name), "tokenizer", None)
    return ModelTokenizer(model_tokenizer) if model_tokenizer is not None else RegexTokenizer()


def chunk_tokenizer() -> Tokenizer:
    """The tokenizer of the configured embedder when it has one, else the regex estimate."""
    return _tokenizer_for(settings.EMBEDDING_PROVIDER)


def chunk_document(
    *,
    document: ParsedDocument,
    tokenizer: Tokenizer | None = None,
    max_tokens: int | None = None,
    overlap_tokens: int | None = None,
) -> list[ChunkPiece]:
    tokenizer = tokenizer or chunk_tokenizer()
    limit = max(8, (max_tokens or settings.CHUNK_TOKENS) - tokenizer.special_tokens)
    overlap = min(settings.CHUNK_OVERLAP_TOKENS if overlap_tokens is None else overlap_tokens, limit // 2)
    text = document.text
    starts, ends = tokenizer.spans(text)
    if not starts:
        return []
    count = len(starts)
    section_tokens = sorted({bisect.bisect_left(starts, segment.start) for segment in document.segments})
    strong = [match.end() for match in _STRONG_BREAK.finditer(text)]
    weak = [match.end() for match in _WEAK_BREAK.finditer(text)]
    segment_starts = [segment.start for segment in document.segments]

    pieces: list[ChunkPiece] = []
    first = 0
    while first < count:
        hard = min(first + limit, count)
        floor = first + limit // 2
        end = _last_between(section_tokens, floor, hard if hard < count else count - 1)
        at_section = end is not None
        if end is None:
            end = hard if hard == count else _break_end(starts, ends, (strong, weak), floor, hard)
        char_start, char_end = starts[first], ends[end - 1]
        pieces.append(
            ChunkPiece(
                index=len(pieces),
                text=text[char_start:char_end],
                token_count=end - first,
                location=_location(document, segment_starts, char_start, char_end),
            )
        )
        if end >= count:
            break
        if len(pieces) % 64 == 0:
            budget_check(CHUNKING)
        first = end if at_section else _word_start(text, starts, max(end - overlap, first + 1), end)
    return pieces


def _last_between(sorted_values: list[int], low: int, high: int) -> int | None:
    """The largest value in (low, high], if any."""
    index = bisect.bisect_right(sorted_values, high) - 1
    return sorted_values[index] if index >= 0 and sorted_values[index] > low else None


def _break_end(starts: list[int], ends: list[int], tiers: tuple[list[int], ...], floor: int, hard: int) -> int:
    """The last token index in (floor, hard] right after a break of the best tier that has one."""
    for breaks in tiers:
        index = bisect.bisect_right(breaks, starts[hard]) - 1
        while index >= 0:
            end = bisect.bisect_left(starts, breaks[index])
            if end <= floor:
                break
            if ends[end - 1] <= breaks[index]:
                return end
            index -= 1
    return hard


def _word_start(text: str, starts: list[int], index: int, limit: int) -> int:
    # Word pieces ("##ing") would start the overlap mid-word.
    while index < limit and starts[index] and text[starts[index] - 1].isalnum() and text[starts[index]].isalnum():
        index += 1
    return index


def _location(document: ParsedDocument, segment_starts: list[int], char_start: int, char_end: int) -> dict[str, Any]:
    location: dict[str, Any] = {"char_start": char_start, "char_end": char_end}
    position = bisect.bisect_right(segment_starts, char_start) - 1
    if position < 0:
        return location
    segment = document.segments[position]
    if segment.heading:
        location["heading"] = list(segment.heading)
    last_position = bisect.bisect_right(segment_starts, char_end - 1) - 1
    last = document.segments[last_position]
    # Any part read from a picture marks the chunk: its text may hold recognition errors.
    if any(part.ocr for part in document.segments[position : last_position + 1]):
        location["ocr"] = True
    if segment.page is not None:
        location["page"] = segment.page
        if last.page is not None and last.page != segment.page:
            location["page_end"] = last.page
    for key, value in segment.place:
        location[key] = value
        end = dict(last.place).get(key)
        if end is not None and end != value:
            location[f"{key}_end"] = end
    if segment.cells is not None:
        # The first sheet's rows in the chunk: its first row's first cell to its last row's last cell.
        same_sheet = (
            later.cells
            for later in reversed(document.segments[position : last_position + 1])
            if later.cells is not None and later.place == segment.place
        )
        location["range"] = f"{segment.cells[0]}:{next(same_sheet, segment.cells)[1]}"
    return location

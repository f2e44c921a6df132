"""What every parser returns: the text to index and where each part of it sits."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from apps.core.stored_messages import StoredMessageError


class ParseError(StoredMessageError):
    """The file is of a supported type but cannot be read (corrupt, encrypted): the file fails.

    Raised as ``ParseError(gettext_noop("unreadable PDF: %(reason)s"), reason=...)``: the reason
    is stored in English and shown in its reader's language (apps/core/stored_messages.py)."""


class UnsupportedDocument(StoredMessageError):
    """Nothing to index in this type or size of file: the file is skipped with this reason (raised
    like ``ParseError``)."""


@dataclass(frozen=True)
class Segment:
    """From ``start`` to the next segment's start, the text is on ``page`` under ``heading``.

    ``place`` adds format-specific location keys (``sheet``, ``slide``, ``chapter``,
    ``attachment``); ``cells`` is the first and last cell of a spreadsheet row, so a chunk of rows
    reports the cell range it covers; ``ocr``: it was read from a picture, so it may hold
    recognition errors.
    """

    start: int
    page: int | None = None
    heading: tuple[str, ...] = ()
    ocr: bool = False
    place: tuple[tuple[str, str | int], ...] = ()
    cells: tuple[str, str] | None = None


@dataclass(frozen=True)
class ParsedDocument:
    text: str
    segments: tuple[Segment, ...] = ()


@dataclass
class TextBuilder:
    """Appends text pieces while recording segment starts as offsets into the final text."""

    parts: list[str] = field(default_factory=list)
    length: int = 0
    segments: list[Segment] = field(default_factory=list)

    def add(self, text: str) -> None:
        if text:
            self.parts.append(text)
            self.length += len(text)

    def ends_with_newline(self) -> bool:
        return not self.parts or self.parts[-1].endswith("\n")

    def newline(self) -> None:
        if not self.ends_with_newline():
            self.add("\n")

    def mark(
        self,
        *,
        start: int | None = None,
        page: int | None = None,
        heading: tuple[str, ...] = (),
        place: tuple[tuple[str, str | int], ...] = (),
        cells: tuple[str, str] | None = None,
        ocr: bool = False,
    ) -> None:
        start = self.length if start is None else start
        self.segments.append(Segment(start=start, page=page, heading=heading, place=place, cells=cells, ocr=ocr))

    def extend(self, part: ParsedDocument, *, place: tuple[tuple[str, str | int], ...] = (), title: str = "") -> None:
        """Appends a parsed part (a chapter, an attachment) with its locations, all under ``place``.

        ``title`` is a line put before the part, inside its place.
        """
        self.newline()
        if place and (title or not part.segments or part.segments[0].start > 0):
            self.mark(place=place)
        if title:
            self.add(title + "\n")
        offset = self.length
        for segment in part.segments:
            self.segments.append(replace(segment, start=offset + segment.start, place=place + segment.place))
        self.add(part.text)

    def build(self) -> ParsedDocument:
        return document(text="".join(self.parts), segments=self.segments)


def document(*, text: str, segments: list[Segment] | tuple[Segment, ...] = ()) -> ParsedDocument:
    # PostgreSQL text cannot hold NUL; a same-length replacement keeps every offset valid.
    return ParsedDocument(text=text.replace("\x00", "\ufffd"), segments=tuple(segments))


class HeadingPath:
    """The chain of open headings: a level-2 heading closes every heading at level >= 2."""

    def __init__(self) -> None:
        self._open: list[tuple[int, str]] = []

    def enter(self, level: int, title: str) -> tuple[str, ...]:
        while self._open and self._open[-1][0] >= level:
            self._open.pop()
        self._open.append((level, title.strip()))
        return tuple(title for _, title in self._open)

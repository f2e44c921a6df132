"""OpenDocument text, spreadsheets and presentations (odt, ods, odp) through odfpy.

Text keeps its headings as locations and every word a reader sees: tables, frames and text boxes
(anchored to the page too), footnotes and comments after their paragraph, then the page styles'
headers and footers; spreadsheets are rendered like Excel sheets (sheet and
cell-range locations); presentations like PowerPoint (slide numbers, titles, notes).

Comments are kept, since a search for their words should find the file, but read "Comment by
<author>: ..." so that neither a reader nor the model takes a reviewer's remark for the document's
own words. Text deleted with changes tracked is left out: it is no longer the document's.
Office suites may indent their XML: whitespace between elements is not text and is skipped
wherever children are walked.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.utils.translation import gettext_noop
from odf.element import Node
from odf.namespaces import DCNS, DRAWNS, OFFICENS, PRESENTATIONNS, STYLENS, TABLENS, TEXTNS
from odf.opendocument import load

from apps.core.stored_messages import StoredMessage
from apps.library.parsing.base import HeadingPath, ParsedDocument, ParseError, TextBuilder
from apps.library.parsing.packages import open_package, reading_package
from apps.library.parsing.sheets import Row, SheetWriter
from apps.library.parsing.slides import slide_lines

# Saved files pad sheets with empty rows and columns repeated to the sheet's edge (a million
# rows); repeated cells with content are rare and are written out at most this many times.
_MAX_REPEAT = 100
# Declarations, change tracking (its deleted text) and forms hold no words a reader sees.
_NOT_CONTENT = frozenset(
    {
        (TEXTNS, "sequence-decls"),
        (TEXTNS, "variable-decls"),
        (TEXTNS, "user-field-decls"),
        (TEXTNS, "tracked-changes"),
        (OFFICENS, "forms"),
        (OFFICENS, "annotation-end"),
    }
)
_INLINE_BREAKS = frozenset({(TEXTNS, "s"), (TEXTNS, "tab"), (TEXTNS, "line-break")})
# Comments; LibreOffice Impress writes a slide's in its own namespace (officeooo).
_ANNOTATIONS = frozenset({(OFFICENS, "annotation"), ("http://openoffice.org/2009/office", "annotation")})
_FLOATING = frozenset({(DRAWNS, "frame"), (DRAWNS, "custom-shape"), (DRAWNS, "g"), (TEXTNS, "note")}) | _ANNOTATIONS
# Placeholders on slides and notes pages that show a field (the page number as "<number>"), not words.
_FIELD_PLACEHOLDERS = frozenset({"page-number", "date-time", "header", "footer"})


def parse_odt(data: bytes, name: str) -> ParsedDocument:
    return _parse(data, kind=StoredMessage(gettext_noop("OpenDocument text")), body="text", render=_text)


def parse_ods(data: bytes, name: str) -> ParsedDocument:
    return _parse(
        data, kind=StoredMessage(gettext_noop("OpenDocument spreadsheet")), body="spreadsheet", render=_spreadsheet
    )


def parse_odp(data: bytes, name: str) -> ParsedDocument:
    return _parse(
        data, kind=StoredMessage(gettext_noop("OpenDocument presentation")), body="presentation", render=_presentation
    )


def _parse(data: bytes, *, kind: str, body: str, render: Callable[[Any, TextBuilder], None]) -> ParsedDocument:
    with open_package(data, kind=kind) as package, reading_package(kind):
        try:
            manifest = package.read("META-INF/manifest.xml")
        except KeyError:
            manifest = b""
    if b"encryption-data" in manifest:
        raise ParseError(gettext_noop("password-protected %(kind)s: it cannot be read without the password"), kind=kind)
    with reading_package(kind):
        # odfpy takes the body's first child node for the content: in indented XML, a run of whitespace.
        document = load(io.BytesIO(data))
        root = next((element for element in _elements(document.body) if element.qname == (OFFICENS, body)), None)
        if root is None:
            raise ParseError(
                gettext_noop("unreadable %(kind)s: the package holds another kind of OpenDocument"), kind=kind
            )
        builder = TextBuilder()
        render(root, builder)
    return builder.build()


def _elements(node: Any) -> Iterator[Any]:
    return (child for child in node.childNodes if getattr(child, "qname", None) is not None)


def _plain(elements: Iterable[Any]) -> str:
    """The words inside ``elements`` on one line: their paragraphs, nested tables, frames and notes."""
    return " ".join(_lines(elements))


def _text(root: Any, builder: TextBuilder) -> None:
    headings = HeadingPath()
    _blocks(_elements(root), builder, headings)
    # Headers and footers live on the page styles (styles.xml), each written once however many pages show it.
    masters = getattr(root.ownerDocument, "masterstyles", None)
    margins: list[Any] = []
    for master in _elements(masters) if masters is not None else ():
        margins.extend(element for element in _elements(master) if element.qname[0] == STYLENS)
    lines = _unique(_lines(margins))
    if lines:
        builder.newline()
        builder.mark(heading=("Headers and footers",))
        builder.add("".join(line + "\n" for line in lines))


def _blocks(elements: Iterable[Any], builder: TextBuilder, headings: HeadingPath) -> None:
    """Headings, paragraphs and tables in reading order, whatever holds them (sections, lists,
    indexes, frames and text boxes anchored to the page); declarations and deleted text are left out."""
    stack = list(reversed(list(elements)))
    while stack:
        element = stack.pop()
        namespace, tag = element.qname
        if namespace == TEXTNS and tag in {"h", "p"}:
            line, floating = _paragraph(element)
            if line and tag == "h":
                level = int(element.getAttrNS(TEXTNS, "outline-level") or 1)
                builder.mark(heading=headings.enter(level, line))
            if line:
                builder.add(line + "\n")
            # Frames, notes and comments inside the paragraph come right after it.
            stack.extend(reversed(floating))
        elif (namespace, tag) in _ANNOTATIONS:
            builder.add(_comment(element) + "\n")
        elif namespace == TABLENS and tag == "table":
            for _, cells in _table_rows(element):
                builder.add(" | ".join(value for _, value in cells) + "\n")
        elif (namespace, tag) not in _NOT_CONTENT:
            stack.extend(reversed(list(_elements(element))))


def _lines(elements: Iterable[Any]) -> list[str]:
    builder = TextBuilder()
    _blocks(elements, builder, HeadingPath())
    return [line for line in builder.build().text.splitlines() if line]


def _comment(annotation: Any) -> str:
    """A comment on one line with its author (dc:creator), its date left out."""
    parts = list(_elements(annotation))
    author = next((" ".join(_text_of(part).split()) for part in parts if part.qname == (DCNS, "creator")), "")
    words = _plain(part for part in parts if part.qname[0] != DCNS)
    return f"Comment by {author}: {words}" if author else f"Comment: {words}"


def _text_of(element: Any) -> str:
    return "".join(child.data for child in element.childNodes if child.nodeType == Node.TEXT_NODE)


def _paragraph(element: Any) -> tuple[str, list[Any]]:
    """A paragraph's own words, and what is anchored in it (frames, notes, comments) to read after it."""
    parts: list[str] = []
    floating: list[Any] = []

    def walk(node: Any) -> None:
        for child in node.childNodes:
            if child.nodeType == Node.TEXT_NODE:
                parts.append(child.data)
            elif child.nodeType == Node.ELEMENT_NODE:
                name = child.qname
                if name in _INLINE_BREAKS:
                    parts.append(" ")
                elif name == (TEXTNS, "note-citation"):
                    continue
                elif name in _FLOATING:
                    floating.append(child)
                elif name not in _NOT_CONTENT:
                    walk(child)

    walk(element)
    return " ".join("".join(parts).split()), floating


def _unique(lines: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(lines))


def _spreadsheet(root: Any, builder: TextBuilder) -> None:
    for sheet in _elements(root):
        if sheet.qname != (TABLENS, "table"):
            continue
        writer = SheetWriter(builder, sheet.getAttrNS(TABLENS, "name") or "Sheet")
        for number, cells in _table_rows(sheet):
            writer.row(number, cells)
        # Text boxes and shapes anchored to the sheet rather than to a cell.
        for line in _lines(element for element in _elements(sheet) if element.qname == (TABLENS, "shapes")):
            writer.text(line)


def _table_rows(table: Any) -> Iterator[tuple[int, Row]]:
    number = 0
    for row in _rows_of(table):
        repeat = int(row.getAttrNS(TABLENS, "number-rows-repeated") or 1)
        cells = _cells(row)
        if not cells:
            number += repeat
            continue
        for _ in range(min(repeat, _MAX_REPEAT)):
            number += 1
            yield number, cells
        number += max(repeat - _MAX_REPEAT, 0)


def _rows_of(table: Any) -> Iterator[Any]:
    for element in _elements(table):
        if element.qname == (TABLENS, "table-row"):
            yield element
        elif element.qname[0] == TABLENS and element.qname[1] in {"table-rows", "table-header-rows", "table-row-group"}:
            yield from _rows_of(element)


def _cells(row: Any) -> Row:
    cells: Row = []
    column = 0
    for cell in _elements(row):
        if cell.qname[0] != TABLENS or cell.qname[1] not in {"table-cell", "covered-table-cell"}:
            continue
        repeat = int(cell.getAttrNS(TABLENS, "number-columns-repeated") or 1)
        value = _cell_value(cell)
        if value:
            cells.extend((column + offset + 1, value) for offset in range(min(repeat, _MAX_REPEAT)))
        column += repeat
    return cells


def _cell_value(cell: Any) -> str:
    parts = list(_elements(cell))
    comments = [f"({_comment(part)})" for part in parts if part.qname in _ANNOTATIONS]
    return " ".join([value, *comments] if (value := _shown_value(cell, parts)) else comments)


def _shown_value(cell: Any, parts: list[Any]) -> str:
    # The text is what the sheet shows (formatted numbers and dates, a formula's saved result).
    if shown := _plain(part for part in parts if part.qname not in _ANNOTATIONS):
        return shown
    value = cell.getAttrNS(OFFICENS, "value") or cell.getAttrNS(OFFICENS, "date-value") or ""
    if not value and (formula := cell.getAttrNS(TABLENS, "formula")):
        return f"{formula} (formula, no saved value)"
    return str(value)


def _presentation(root: Any, builder: TextBuilder) -> None:
    pages = (page for page in _elements(root) if page.qname == (DRAWNS, "page"))
    for number, page in enumerate(pages, start=1):
        title = ""
        lines: list[str] = []
        notes = ""
        for element in _elements(page):
            if element.qname == (PRESENTATIONNS, "notes"):
                frames = (frame for frame in _elements(element) if _shows_words(frame))
                notes = " ".join(_lines(frames))
            elif element.getAttrNS(PRESENTATIONNS, "class") == "title" and not title:
                title = _plain([element])
            elif _shows_words(element):
                lines.extend(_lines([element]))
        slide_lines(number=number, title=title, lines=lines, notes=notes, builder=builder)


def _shows_words(shape: Any) -> bool:
    return shape.getAttrNS(PRESENTATIONNS, "class") not in _FIELD_PLACEHOLDERS

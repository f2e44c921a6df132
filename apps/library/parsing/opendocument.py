"""OpenDocument text, spreadsheets and presentations (odt, ods, odp) through odfpy.

Text keeps its headings as locations; spreadsheets are rendered like Excel sheets (sheet and
cell-range locations); presentations like PowerPoint (slide numbers, titles, notes).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Any

from odf import teletype
from odf.namespaces import DRAWNS, OFFICENS, PRESENTATIONNS, TABLENS, TEXTNS
from odf.opendocument import load

from apps.library.parsing.base import HeadingPath, ParsedDocument, ParseError, TextBuilder
from apps.library.parsing.packages import open_package, reading_package
from apps.library.parsing.sheets import Row, SheetWriter
from apps.library.parsing.slides import slide_lines

# Saved files pad sheets with empty rows and columns repeated to the sheet's edge (a million
# rows); repeated cells with content are rare and are written out at most this many times.
_MAX_REPEAT = 100
_BLOCK_CONTAINERS = frozenset({"section", "list", "list-item", "list-header", "index-body", "table-of-content"})


def parse_odt(data: bytes, name: str) -> ParsedDocument:
    return _parse(data, kind="OpenDocument text", body="text", render=_text)


def parse_ods(data: bytes, name: str) -> ParsedDocument:
    return _parse(data, kind="OpenDocument spreadsheet", body="spreadsheet", render=_spreadsheet)


def parse_odp(data: bytes, name: str) -> ParsedDocument:
    return _parse(data, kind="OpenDocument presentation", body="presentation", render=_presentation)


def _parse(data: bytes, *, kind: str, body: str, render: Callable[[Any, TextBuilder], None]) -> ParsedDocument:
    with open_package(data, kind=kind) as package, reading_package(kind):
        try:
            manifest = package.read("META-INF/manifest.xml")
        except KeyError:
            manifest = b""
    if b"encryption-data" in manifest:
        raise ParseError(f"password-protected {kind}: it cannot be read without the password")
    with reading_package(kind):
        root = getattr(load(io.BytesIO(data)), body, None)
        if root is None:
            raise ParseError(f"unreadable {kind}: the package holds another kind of OpenDocument")
        builder = TextBuilder()
        render(root, builder)
    return builder.build()


def _elements(node: Any) -> Iterator[Any]:
    return (child for child in node.childNodes if getattr(child, "qname", None) is not None)


def _plain(element: Any) -> str:
    return " ".join(teletype.extractText(element).split())


def _text(root: Any, builder: TextBuilder) -> None:
    headings = HeadingPath()
    stack = list(reversed(list(_elements(root))))
    while stack:
        element = stack.pop()
        namespace, tag = element.qname
        if namespace == TEXTNS and tag == "h":
            title = _plain(element)
            if title:
                level = int(element.getAttrNS(TEXTNS, "outline-level") or 1)
                builder.mark(heading=headings.enter(level, title))
                builder.add(title + "\n")
        elif namespace == TEXTNS and tag == "p":
            if line := _plain(element):
                builder.add(line + "\n")
        elif namespace == TABLENS and tag == "table":
            for _, cells in _table_rows(element):
                builder.add(" | ".join(value for _, value in cells) + "\n")
        elif tag in _BLOCK_CONTAINERS:
            stack.extend(reversed(list(_elements(element))))


def _spreadsheet(root: Any, builder: TextBuilder) -> None:
    for sheet in _elements(root):
        if sheet.qname != (TABLENS, "table"):
            continue
        writer = SheetWriter(builder, sheet.getAttrNS(TABLENS, "name") or "Sheet")
        for number, cells in _table_rows(sheet):
            writer.row(number, cells)


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
    # The text is what the sheet shows (formatted numbers and dates, a formula's saved result).
    if shown := _plain(cell):
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
                notes = " ".join(_plain(frame) for frame in _elements(element) if _plain(frame))
            elif element.getAttrNS(PRESENTATIONNS, "class") == "title" and not title:
                title = _plain(element)
            else:
                lines.extend(_frame_lines(element))
        slide_lines(number=number, title=title, lines=lines, notes=notes, builder=builder)


def _frame_lines(element: Any) -> list[str]:
    lines: list[str] = []
    stack = [element]
    while stack:
        node = stack.pop()
        namespace, tag = node.qname
        if namespace == TEXTNS and tag in {"p", "h"}:
            if line := _plain(node):
                lines.append(line)
        elif namespace == TABLENS and tag == "table":
            lines.extend(" | ".join(value for _, value in cells) for _, cells in _table_rows(node))
        else:
            stack.extend(reversed(list(_elements(node))))
    return lines

"""Word documents (docx) through python-docx: paragraphs and tables in body order."""

from __future__ import annotations

import io
import re
from typing import Any

import docx
from docx.opc.exceptions import PackageNotFoundError
from docx.table import Table
from docx.text.paragraph import Paragraph

from apps.library.parsing.base import HeadingPath, ParsedDocument, TextBuilder
from apps.library.parsing.packages import open_package, reading_package

_HEADING_STYLE = re.compile(r"^Heading (\d)$")


def parse_docx(data: bytes, name: str) -> ParsedDocument:
    open_package(data, kind="Word document").close()
    with reading_package("Word document", PackageNotFoundError):
        return _parse(docx.Document(io.BytesIO(data)))


def _parse(document: Any) -> ParsedDocument:
    builder = TextBuilder()
    headings = HeadingPath()
    # Paragraph.style searches every style of the document on each call (seconds for a long
    # document); a paragraph's style id and one lookup table give the same names.
    style_names = {style.style_id: style.name for style in document.styles}
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            _paragraph(block, style_names.get(block._p.style or "", "") or "", builder, headings)
        elif isinstance(block, Table):
            _table(block, builder)
    return builder.build()


def _paragraph(paragraph: Paragraph, style: str, builder: TextBuilder, headings: HeadingPath) -> None:
    text = paragraph.text.strip()
    if not text:
        return
    level = 1 if style == "Title" else int(match[1]) if (match := _HEADING_STYLE.match(style)) else 0
    if level:
        builder.mark(heading=headings.enter(level, text))
    builder.add(text + "\n")


def _table(table: Table, builder: TextBuilder) -> None:
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = cell.text.strip()
            # Merged cells repeat the same cell object along the row.
            if text and (not cells or cells[-1] != text):
                cells.append(text)
        if cells:
            builder.add(" | ".join(cells) + "\n")
    builder.newline()

"""Word documents (docx) through python-docx: every word a reader sees.

The body's paragraphs and tables in order (a text box after the paragraph it is anchored in, a
cell's nested tables and text boxes inside the cell), then what python-docx does not put in the
body: headers and footers (each distinct one once), footnotes, endnotes and comments.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import docx
from django.utils.translation import gettext_noop
from docx.opc.exceptions import PackageNotFoundError
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml import etree

from apps.core.stored_messages import StoredMessage
from apps.library.parsing.base import HeadingPath, ParsedDocument, TextBuilder
from apps.library.parsing.packages import open_package, reading_package

# The format as reasons name it, translated where they are read.
_KIND = StoredMessage(gettext_noop("Word document"))

_HEADING_STYLE = re.compile(r"^Heading (\d)$")
_P, _TBL, _T, _TAB, _BR = qn("w:p"), qn("w:tbl"), qn("w:t"), qn("w:tab"), qn("w:br")
_TXBX = qn("w:txbxContent")
# Word writes a text box twice: as DrawingML (mc:Choice) and as VML for old readers (mc:Fallback).
_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
# Parts beside the body, by relationship type, with the heading their text is filed under.
_NOTE_PARTS = {
    "/footnotes": "Footnotes",
    "/endnotes": "Endnotes",
    "/comments": "Comments",
}
_MARGINS = ("header", "first_page_header", "even_page_header", "footer", "first_page_footer", "even_page_footer")
# Footnote and endnote separators are lines, not notes.
_SEPARATORS = frozenset({"separator", "continuationSeparator", "continuationNotice"})


def parse_docx(data: bytes, name: str) -> ParsedDocument:
    open_package(data, kind=_KIND).close()
    with reading_package(_KIND, PackageNotFoundError):
        return _parse(docx.Document(io.BytesIO(data)))


def _parse(document: Any) -> ParsedDocument:
    builder = TextBuilder()
    headings = HeadingPath()
    # Paragraph.style searches every style of the document on each call (seconds for a long
    # document); a paragraph's style id and one lookup table give the same names.
    style_names = {style.style_id: style.name for style in document.styles}
    for element in document.element.body.iterchildren():
        if element.tag == _P:
            _paragraph(Paragraph(element, document), style_names.get(element.style or "", "") or "", builder, headings)
        elif element.tag == _TBL:
            _table(Table(element, document), builder)
        elif text := _element_text(element):  # content controls (w:sdt) and custom XML around blocks
            builder.add(text + "\n")
    _margins(document, builder)
    _notes(document, builder)
    return builder.build()


def _paragraph(paragraph: Paragraph, style: str, builder: TextBuilder, headings: HeadingPath) -> None:
    # Its runs, those inside hyperlinks, content controls and tracked insertions included.
    text = " ".join(_run_text(paragraph._p).split())
    if text:
        level = 1 if style == "Title" else int(match[1]) if (match := _HEADING_STYLE.match(style)) else 0
        if level:
            builder.mark(heading=headings.enter(level, text))
        builder.add(text + "\n")
    for box in _text_boxes(paragraph._p):
        builder.add(box + "\n")


def _table(table: Table, builder: TextBuilder) -> None:
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = _element_text(cell._tc)
            # Merged cells repeat the same cell object along the row.
            if text and (not cells or cells[-1] != text):
                cells.append(text)
        if cells:
            builder.add(" | ".join(cells) + "\n")
    builder.newline()


def _margins(document: Any, builder: TextBuilder) -> None:
    """Headers and footers of every section, each distinct text once (sections share them)."""
    seen: set[str] = set()
    lines: list[str] = []
    for section in document.sections:
        for part in _MARGINS:
            margin = getattr(section, part)
            if margin.is_linked_to_previous:
                continue
            text = _element_text(margin._element)
            if text and text not in seen:
                seen.add(text)
                lines.append(text)
    _section(builder, "Headers and footers", lines)


def _notes(document: Any, builder: TextBuilder) -> None:
    for relationship in document.part.rels.values():
        heading = next((h for suffix, h in _NOTE_PARTS.items() if relationship.reltype.endswith(suffix)), None)
        if heading is None or relationship.is_external:
            continue
        root = etree.fromstring(relationship.target_part.blob)
        notes = (note for note in root if note.get(qn("w:type")) not in _SEPARATORS)
        _section(builder, heading, [text for note in notes if (text := _element_text(note))])


def _section(builder: TextBuilder, heading: str, lines: list[str]) -> None:
    if not lines:
        return
    builder.newline()
    builder.mark(heading=(heading,))
    for line in lines:
        builder.add(line + "\n")


def _text_boxes(element: Any) -> Iterator[str]:
    for box in element.iter(_TXBX):
        if not _in_fallback(box, stop=element) and (text := _element_text(box)):
            yield text


def _element_text(element: Any) -> str:
    """Every paragraph under ``element`` (nested tables and text boxes included), one line each."""
    lines = []
    for paragraph in element.iter(_P):
        if _in_fallback(paragraph, stop=element):
            continue
        words = " ".join(_run_text(paragraph).split())
        if words:
            lines.append(words)
    return " ".join(lines)


def _run_text(paragraph: Any) -> str:
    """A paragraph's own text: its runs, not the paragraphs of text boxes anchored in it."""
    parts = []
    for node in paragraph.iter(_T, _TAB, _BR):
        if _owner_paragraph(node) is paragraph:
            parts.append((node.text or "") if node.tag == _T else " ")
    return "".join(parts)


def _owner_paragraph(node: Any) -> Any:
    parent = node.getparent()
    while parent is not None and parent.tag != _P:
        parent = parent.getparent()
    return parent


def _in_fallback(node: Any, *, stop: Any) -> bool:
    parent = node.getparent()
    while parent is not None and parent is not stop:
        if parent.tag == _FALLBACK:
            return True
        parent = parent.getparent()
    return False

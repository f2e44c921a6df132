"""PowerPoint (pptx) through python-pptx: per slide its title, text, tables and speaker notes.

Each slide is a section located by ``{"slide": n}`` under its title as the heading.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pptx
from django.utils.translation import gettext_noop
from pptx.exc import PackageNotFoundError
from pptx.shapes.base import BaseShape
from pptx.shapes.group import GroupShape

from apps.core.stored_messages import StoredMessage
from apps.library.parsing.base import ParsedDocument, TextBuilder
from apps.library.parsing.packages import open_package, reading_package

# The format as reasons name it, translated where they are read.
_KIND = StoredMessage(gettext_noop("PowerPoint presentation"))


def parse_pptx(data: bytes, name: str) -> ParsedDocument:
    open_package(data, kind=_KIND).close()
    with reading_package(_KIND, PackageNotFoundError):
        presentation = pptx.Presentation(io.BytesIO(data))
        builder = TextBuilder()
        for number, slide in enumerate(presentation.slides, start=1):
            _slide(number, slide, builder)
    return builder.build()


def slide_lines(*, number: int, title: str, lines: list[str], notes: str, builder: TextBuilder) -> None:
    """One slide as a section: shared with the OpenDocument presentation parser."""
    heading = f"Slide {number}: {title}" if title else f"Slide {number}"
    builder.newline()
    builder.mark(heading=(title,) if title else (), place=(("slide", number),))
    builder.add(heading + "\n")
    for line in lines:
        builder.add(line + "\n")
    if notes:
        builder.add("Speaker notes: " + notes + "\n")


def _slide(number: int, slide: Any, builder: TextBuilder) -> None:
    title_shape = slide.shapes.title
    title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
    lines: list[str] = []
    # Reading order: top to bottom, then left to right, whatever order the shapes were drawn in.
    shapes = sorted(_shapes(slide.shapes), key=lambda shape: (shape.top or 0, shape.left or 0))
    for shape in shapes:
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        lines.extend(_shape_lines(shape))
    notes = ""
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        notes = " ".join(slide.notes_slide.notes_text_frame.text.split())
    slide_lines(number=number, title=title, lines=lines, notes=notes, builder=builder)


def _shapes(shapes: Any) -> Iterator[BaseShape]:
    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _shape_lines(shape: Any) -> list[str]:
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = ([" ".join(cell.text.split()) for cell in row.cells] for row in shape.table.rows)
        return [" | ".join(cell for cell in row if cell) for row in rows if any(row)]
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        paragraphs = (" ".join(paragraph.text.split()) for paragraph in shape.text_frame.paragraphs)
        return [paragraph for paragraph in paragraphs if paragraph]
    return []

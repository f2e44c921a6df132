"""Plain text and markdown (Google Docs arrive as one of these when exported)."""

from __future__ import annotations

import codecs
import re

from django.utils.translation import gettext_noop

from apps.library.parsing.base import HeadingPath, ParsedDocument, Segment, UnsupportedDocument, document

_MARKDOWN_LINE = re.compile(r"^(?:(?P<fence>```|~~~)|(?P<hashes>#{1,6})[ \t]+(?P<title>.+?)[ \t#]*)$", re.MULTILINE)


def decode_text(data: bytes) -> str:
    """Bytes to text with normalised newlines; binary content is refused, not garbled."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
    elif b"\x00" in data[:8192]:
        raise UnsupportedDocument(gettext_noop("binary content, not text"))
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            # Legacy Windows text is the common non-UTF-8 case; cp1252 decodes nearly every byte.
            text = data.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_text(data: bytes, name: str) -> ParsedDocument:
    return document(text=decode_text(data))


def parse_markdown(data: bytes, name: str) -> ParsedDocument:
    text = decode_text(data)
    segments: list[Segment] = []
    path = HeadingPath()
    in_fence = False
    for match in _MARKDOWN_LINE.finditer(text):
        if match["fence"]:
            in_fence = not in_fence
        elif not in_fence:
            heading = path.enter(len(match["hashes"]), match["title"])
            segments.append(Segment(start=match.start(), heading=heading))
    return document(text=text, segments=segments)

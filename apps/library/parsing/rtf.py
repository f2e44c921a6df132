"""Rich Text Format through striprtf (code pages, unicode escapes, pictures and tables dropped)."""

from __future__ import annotations

from django.utils.translation import gettext_noop
from striprtf.striprtf import rtf_to_text

from apps.library.parsing.base import ParsedDocument, ParseError, document


def parse_rtf(data: bytes, name: str) -> ParsedDocument:
    # RTF is 7-bit text with escapes for everything else; latin-1 maps every byte one to one.
    source = data.decode("latin-1")
    if not source.lstrip().startswith("{\\rtf"):
        raise ParseError(gettext_noop("not an RTF document: it does not start with {\\rtf"))
    try:
        text = rtf_to_text(source, errors="replace")
    except (ValueError, LookupError, IndexError) as exc:
        raise ParseError(gettext_noop("unreadable RTF: %(reason)s"), reason=exc or type(exc).__name__) from exc
    return document(text=text.replace("\r\n", "\n").replace("\r", "\n"))

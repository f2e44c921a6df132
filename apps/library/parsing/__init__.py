"""Parsers per content type, chosen by mime type (or the file name when the type is vague).

``parse_document`` returns the text to index with its locations, raises ``UnsupportedDocument``
when there is nothing to index (the file is skipped) and ``ParseError`` when a supported file
cannot be read (the file fails).
"""

from __future__ import annotations

import mimetypes
from collections.abc import Callable

from django.utils.translation import gettext_noop

from apps.library.parsing.audio import AUDIO_EXTENSIONS, AUDIO_TYPES, parse_audio
from apps.library.parsing.base import ParsedDocument, ParseError, Segment, UnsupportedDocument
from apps.library.parsing.epub import parse_epub
from apps.library.parsing.images import IMAGE_TYPES, parse_image
from apps.library.parsing.mail import parse_eml
from apps.library.parsing.office import parse_docx
from apps.library.parsing.opendocument import parse_odp, parse_ods, parse_odt
from apps.library.parsing.pdf import parse_pdf
from apps.library.parsing.rtf import parse_rtf
from apps.library.parsing.sheets import parse_xlsx
from apps.library.parsing.slides import parse_pptx
from apps.library.parsing.tabular import parse_csv, parse_json, parse_tsv
from apps.library.parsing.text import parse_markdown, parse_text
from apps.library.parsing.webpage import parse_html_page

__all__ = [
    "ParseError",
    "ParsedDocument",
    "Segment",
    "UnsupportedDocument",
    "document_kind",
    "parse_document",
    "read_as_text",
]

Parser = Callable[[bytes, str], ParsedDocument]

PARSERS: dict[str, Parser] = {
    "text/plain": parse_text,
    "text/markdown": parse_markdown,
    "text/x-markdown": parse_markdown,
    "text/html": parse_html_page,
    "application/xhtml+xml": parse_html_page,
    "application/pdf": parse_pdf,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": parse_docx,
    "text/csv": parse_csv,
    "text/tab-separated-values": parse_tsv,
    "application/json": parse_json,
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": parse_xlsx,
    "application/vnd.ms-excel.sheet.macroenabled.12": parse_xlsx,
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": parse_pptx,
    "application/vnd.oasis.opendocument.text": parse_odt,
    "application/vnd.oasis.opendocument.spreadsheet": parse_ods,
    "application/vnd.oasis.opendocument.presentation": parse_odp,
    "application/rtf": parse_rtf,
    "text/rtf": parse_rtf,
    "application/epub+zip": parse_epub,
    "message/rfc822": parse_eml,
}
# Types by file name when the source says only "binary": mimetypes knows these only where the
# system's mime.types lists them, so they are named here for every machine.
_BY_EXTENSION = {
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".xlsm": "application/vnd.ms-excel.sheet.macroenabled.12",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".odt": "application/vnd.oasis.opendocument.text",
    ".ods": "application/vnd.oasis.opendocument.spreadsheet",
    ".odp": "application/vnd.oasis.opendocument.presentation",
    ".rtf": "application/rtf",
    ".epub": "application/epub+zip",
    ".eml": "message/rfc822",
    ".md": "text/markdown",
    **AUDIO_EXTENSIONS,
}
PARSERS.update(dict.fromkeys(IMAGE_TYPES, parse_image))
PARSERS.update(dict.fromkeys(AUDIO_TYPES, parse_audio))
# Text in all but name: source code, config, logs.
_TEXTUAL = frozenset(
    {
        "application/xml",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/javascript",
        "application/x-sh",
        "application/x-python",
        "application/sql",
        "application/x-tex",
    }
)
_VAGUE = frozenset({"", "application/octet-stream", "binary/octet-stream"})


def document_kind(*, mime_type: str, name: str) -> str:
    """The content type a file is parsed as: its own, or its name's when the source's is vague."""
    kind = mime_type.split(";", 1)[0].strip().lower()
    if kind in _VAGUE:
        suffix = name[name.rfind(".") :].lower() if "." in name else ""
        kind = (_BY_EXTENSION.get(suffix) or mimetypes.guess_type(name, strict=False)[0] or kind).lower()
    return kind


def read_as_text(kind: str) -> bool:
    """Whether a content type without a parser of its own is read as plain text."""
    return kind.startswith("text/") or kind in _TEXTUAL


def parse_document(*, data: bytes, mime_type: str, name: str) -> ParsedDocument:
    kind = document_kind(mime_type=mime_type, name=name)
    parser = PARSERS.get(kind)
    if parser is None and read_as_text(kind):
        parser = parse_text
    if parser is None:
        raise UnsupportedDocument(gettext_noop("unsupported file type %(kind)s"), kind=kind or "unknown")
    document = parser(data, name)
    if not document.text.strip():
        raise UnsupportedDocument(gettext_noop("no text to index"))
    return document

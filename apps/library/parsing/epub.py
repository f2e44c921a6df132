"""EPUB books through ebooklib: chapters in reading (spine) order, each located by its number.

Chapters are XHTML written as content (no site navigation to strip), so every visible word is
kept through the HTML parser, whose headings become locations within the chapter.
"""

from __future__ import annotations

import io
import zipfile

import ebooklib
from django.utils.translation import gettext_noop
from ebooklib import epub
from lxml import etree

from apps.core.stored_messages import StoredMessage
from apps.library.parsing.base import ParsedDocument, ParseError, TextBuilder, UnsupportedDocument
from apps.library.parsing.html import parse_html
from apps.library.parsing.packages import open_package, reading_package

# The format as reasons name it, translated where they are read.
_KIND = StoredMessage(gettext_noop("EPUB book"))

# Fonts obfuscated by these algorithms are no obstacle; anything else encrypting text is DRM.
_FONT_OBFUSCATION = frozenset({"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"})


def parse_epub(data: bytes, name: str) -> ParsedDocument:
    with open_package(data, kind=_KIND) as package, reading_package(_KIND):
        _refuse_drm(package)
    with reading_package(_KIND, epub.EpubException):
        return _chapters(epub.read_epub(io.BytesIO(data), {"ignore_ncx": True}))


def _chapters(book: epub.EpubBook) -> ParsedDocument:
    builder = TextBuilder()
    chapter = 0
    for item_id, _linear in book.spine:
        item = book.get_item_with_id(item_id)
        # The navigation document (a table of contents) may sit in the spine too.
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT or isinstance(item, epub.EpubNav):
            continue
        try:
            part = parse_html(item.get_content(), item.get_name())
        except UnsupportedDocument:
            continue
        if part.text.strip():
            chapter += 1
            builder.extend(part, place=(("chapter", chapter),))
    return builder.build()


def _refuse_drm(package: zipfile.ZipFile) -> None:
    try:
        manifest = package.read("META-INF/encryption.xml")
    except KeyError:
        return
    try:
        root = etree.fromstring(manifest, parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        raise ParseError(
            gettext_noop("unreadable EPUB book: bad encryption manifest (%(reason)s)"), reason=exc
        ) from exc
    algorithms = {method.get("Algorithm") for method in root.iter("{*}EncryptionMethod")}
    if algorithms - _FONT_OBFUSCATION:
        raise ParseError(gettext_noop("DRM-protected EPUB book: its chapters are encrypted"))

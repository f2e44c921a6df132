"""PDF text per page through pypdf; encrypted or corrupt files fail with the reason. Pages with
no text layer (scans) are rendered by PDFium (pypdfium2) and read by OCR, keeping their number.

A PDF has no page limit: what a long one costs is bounded where the cost is. Every page is a check
of the file's time budget, the text read so far is held to the budget-sized text cap page by page
(a PDF with more text than the budget can embed is skipped with that reason as soon as it shows,
not after reading the rest), and scanned pages share the OCR part of the budget (pages beyond it
are left out, the pages read are indexed). So a 600-page text PDF is indexed to its last page.
"""

from __future__ import annotations

import io
import logging

from django.utils.translation import gettext_noop
from pypdf import PdfReader
from pypdf.errors import PyPdfError

from apps.core.stored_messages import StoredMessage
from apps.library.budget import budget_check, text_cap_reason
from apps.library.parsing.base import ParsedDocument, ParseError, TextBuilder, UnsupportedDocument
from apps.library.parsing.pdf_scans import ScanReader

# pypdf logs every recoverable oddity of real-world files; the outcome is recorded on the file.
logging.getLogger("pypdf").setLevel(logging.ERROR)


def parse_pdf(data: bytes, name: str) -> ParsedDocument:
    try:
        return _parse(data, name)
    except (ParseError, UnsupportedDocument):
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as exc:
        # Damaged files surface as any of these from deep inside pypdf.
        raise ParseError(gettext_noop("unreadable PDF: %(reason)s"), reason=exc or type(exc).__name__) from exc


def _parse(data: bytes, name: str) -> ParsedDocument:
    reader = PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted and not reader.decrypt(""):
        raise ParseError(gettext_noop("password-protected PDF"))
    page_count = len(reader.pages)
    builder = TextBuilder()
    with ScanReader(data) as scans:
        for number, page in enumerate(reader.pages, start=1):
            budget_check(
                StoredMessage(gettext_noop("reading page %(page)s of %(pages)s"), page=number, pages=page_count)
            )
            text = (page.extract_text() or "").strip()
            scanned = scans.read(number) if scans.wanted(text) else None
            if scanned and len(scanned) > len(text):
                builder.mark(page=number, ocr=True)
                builder.add(scanned + "\n\n")
            elif text:
                builder.mark(page=number)
                builder.add(text + "\n\n")
            too_much = text_cap_reason(chars=builder.length)
            if too_much:
                raise UnsupportedDocument(
                    gettext_noop("%(too_much)s; stopped reading at page %(page)s of %(pages)s"),
                    too_much=too_much,
                    page=f"{number:,}",
                    pages=f"{page_count:,}",
                )
        if not builder.length:
            raise scans.nothing_read()
        scans.log_shortfall(name)
    return builder.build()

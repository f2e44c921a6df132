"""OCR of the pages of a PDF that have no text layer: PDFium (pypdfium2) renders them at about
300 dpi, grey, within the OCR working size; the file's OCR time budget covers all its pages."""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any

from django.conf import settings
from django.utils.translation import gettext_noop
from PIL import Image

from apps.core.stored_messages import StoredMessage
from apps.library.parsing.base import ParseError, UnsupportedDocument
from apps.library.parsing.ocr import WORKING_SIDE, OcrBudget, ocr_available

logger = logging.getLogger(__name__)

# A page whose text layer holds less than this is treated as a scan: scanners often add only a
# page number or a stamp as text.
MIN_LAYER_CHARS = 20
_DPI = 300


class ScanReader:
    """Per PDF: ``wanted`` says whether a page's extracted text calls for OCR, ``read`` renders
    and reads it. PDFium opens the file only when the first scanned page comes."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._document: Any = None
        self._budget = OcrBudget()
        self._unavailable = "" if settings.OCR_ENABLED else "scanned pages need OCR, which is turned off (OCR_ENABLED)"
        self._scanned_pages = 0
        self._unrendered = ""

    def __enter__(self) -> ScanReader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._document is not None:
            self._document.close()

    def wanted(self, text: str) -> bool:
        if len(text) >= MIN_LAYER_CHARS or self._unavailable:
            return False
        try:
            ocr_available()
        except UnsupportedDocument as exc:
            self._unavailable = StoredMessage(gettext_noop("scanned pages need OCR: %(reason)s"), reason=exc.message)
            return False
        return True

    def read(self, number: int) -> str | None:
        self._scanned_pages += 1
        try:
            reading = self._budget.read(lambda: self.render(number))
        except ParseError as exc:
            # One page PDFium cannot draw is left out; the rest of the file still counts.
            logger.warning("%s", exc)
            self._unrendered = exc.message
            return None
        return reading.text if reading is not None else None

    def nothing_read(self) -> Exception:
        """The error for a PDF that gave no text at all, by what happened to its scanned pages."""
        if self._budget.shortfall():
            return ParseError(gettext_noop("OCR did not finish: %(shortfall)s"), shortfall=self._budget.shortfall())
        if self._unrendered:
            return ParseError(self._unrendered)
        if self._unavailable:
            return UnsupportedDocument(
                gettext_noop("PDF has no extractable text (%(reason)s)"), reason=self._unavailable
            )
        if self._scanned_pages:
            return UnsupportedDocument(gettext_noop("PDF has no extractable text, and OCR found none on its pages"))
        return UnsupportedDocument(gettext_noop("PDF has no extractable text"))

    def log_shortfall(self, name: str) -> None:
        if self._budget.shortfall():
            logger.warning("partial OCR of %s: %s", name, self._budget.shortfall())

    def render(self, number: int) -> Image.Image:
        """Page ``number`` (from 1) as a grey image at about 300 dpi, within the working size."""
        import pypdfium2

        try:
            if self._document is None:
                self._document = pypdfium2.PdfDocument(self._data)
            page = self._document[number - 1]
            try:
                width, height = page.get_size()
                # ~300 dpi, but never beyond the working size: a poster-sized page stays bounded.
                scale = min(_DPI / 72, WORKING_SIDE / max(width, height, 1.0))
                return page.render(scale=scale, grayscale=True).to_pil()
            finally:
                page.close()
        except pypdfium2.PdfiumError as exc:
            raise ParseError(
                gettext_noop("PDF page %(page)s cannot be rendered for OCR: %(reason)s"), page=number, reason=exc
            ) from exc

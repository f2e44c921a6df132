"""Pictures (png, jpeg, tiff, webp, gif, bmp, heic) read by OCR; every page of a multi-page TIFF
(fax and scanner output) keeps its page number. A TIFF has no page limit: its pages share the
file's OCR budget, and those beyond it are left out while the pages read are indexed."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable

from django.conf import settings
from django.utils.translation import gettext_noop
from PIL import Image, ImageSequence, UnidentifiedImageError

from apps.library.parsing.base import ParsedDocument, ParseError, TextBuilder, UnsupportedDocument
from apps.library.parsing.ocr import WORKING_SIDE, OcrBudget, ocr_available

logger = logging.getLogger(__name__)

IMAGE_TYPES = (
    "image/png",
    "image/jpeg",
    "image/jpg",
    "image/pjpeg",
    "image/tiff",
    "image/webp",
    "image/gif",
    "image/bmp",
    "image/x-ms-bmp",
    "image/heic",
    "image/heif",
)
# Pillow raises any of these on a damaged file, at open or only when the pixels are decoded.
_UNREADABLE = (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError, IndexError)


def _register_heif() -> None:
    try:
        from pillow_heif import register_heif_opener
    except ImportError:  # HEIC is optional: without the wheel those files are unreadable, not fatal
        return
    register_heif_opener()


_register_heif()


def parse_image(data: bytes, name: str) -> ParsedDocument:
    if not settings.OCR_ENABLED:
        raise UnsupportedDocument(gettext_noop("images need OCR, which is turned off (OCR_ENABLED)"))
    ocr_available()
    image = _open(data)
    pages = _page_count(image)
    budget = OcrBudget()
    builder = TextBuilder()
    for number in range(1, pages + 1):
        reading = budget.read(_frame_loader(image, number - 1))
        if reading is not None:
            builder.mark(page=number if pages > 1 else None, ocr=True)
            builder.add(reading.text + "\n\n")
    if builder.length:
        if budget.shortfall():
            logger.warning("partial OCR of %s: %s", name, budget.shortfall())
        return builder.build()
    if budget.shortfall():
        raise ParseError(gettext_noop("OCR did not finish: %(shortfall)s"), shortfall=budget.shortfall())
    raise UnsupportedDocument(gettext_noop("no text found in the image"))


def _open(data: bytes) -> Image.Image:
    try:
        image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise UnsupportedDocument(gettext_noop("image too large to read safely: %(reason)s"), reason=exc) from exc
    except UnidentifiedImageError as exc:
        # Pillow's message names an in-memory buffer, which says nothing to a person.
        raise ParseError(gettext_noop("unreadable image: not a picture in a format that can be read")) from exc
    except _UNREADABLE as exc:
        raise ParseError(gettext_noop("unreadable image: %(reason)s"), reason=exc or type(exc).__name__) from exc
    width, height = image.size
    if width * height > settings.OCR_MAX_IMAGE_PIXELS:
        raise UnsupportedDocument(
            gettext_noop(
                "image is %(width)s x %(height)s pixels, more than the OCR limit of %(limit)s (OCR_MAX_IMAGE_PIXELS)"
            ),
            width=width,
            height=height,
            limit=f"{settings.OCR_MAX_IMAGE_PIXELS:,}",
        )
    return image


def _page_count(image: Image.Image) -> int:
    # Frames of a GIF or WebP are an animation and an MPO's are camera previews: only a TIFF's
    # frames are pages.
    return getattr(image, "n_frames", 1) if image.format == "TIFF" else 1


def _frame_loader(image: Image.Image, index: int) -> Callable[[], Image.Image]:
    def load() -> Image.Image:
        try:
            frame = ImageSequence.Iterator(image)[index]
            # JPEG decodes straight at a reduced scale: a 50-megapixel photo never sits in memory.
            frame.draft("L", (WORKING_SIDE, WORKING_SIDE))
            frame.load()
        except Image.DecompressionBombError as exc:
            raise UnsupportedDocument(gettext_noop("image too large to read safely: %(reason)s"), reason=exc) from exc
        except _UNREADABLE as exc:
            raise ParseError(gettext_noop("unreadable image: %(reason)s"), reason=exc or type(exc).__name__) from exc
        return frame

    return load

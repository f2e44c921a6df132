"""Text out of pictures with Tesseract (Debian's ``tesseract-ocr``, run by pytesseract).

Each recognition is a ``tesseract`` subprocess: a crash or a hang on a hostile image ends that
process only, and the time budget kills it. Orientation: the first pass lets Tesseract's own
orientation detection (OSD, page segmentation mode 1) turn the page; when that reads little with
confidence (too few characters for OSD, a sideways phone photo), the three other quarter turns
are tried and the most confident reading is kept. ``bench/ingest/ocr_quality.py`` measures this
against RapidOCR on the same images.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext_noop
from PIL import Image, ImageOps

from apps.core.stored_messages import StoredMessage
from apps.library.budget import budget_remaining
from apps.library.parsing.base import ParseError, UnsupportedDocument

# Tesseract's OpenMP threads fight the other worker process for the two cores and make it slower
# overall; one recognition per worker process, one thread each. Read by the subprocess.
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

# Tesseract reads text best at about 300 dpi: an A4 page is ~3500 px high. Larger images are
# scaled down first (phone photos are 4000-8000 px), which bounds memory and time.
WORKING_SIDE = 3500
# A reading this confident needs no other orientation tried (mean word confidence, 0-100).
_CONFIDENT = 70.0
# Below this mean confidence the "text" is Tesseract reading shapes in a photo: nothing to index.
_NOISE = 45.0
_TURNS = (90, 180, 270)
# OCR may spend this share of what the file has left of its time budget, so the pages it read are
# still chunked and embedded in time: a long scan indexes its first pages instead of failing whole.
OCR_SHARE_OF_FILE_BUDGET = 2 / 3

logger = logging.getLogger(__name__)


class OcrTimeout(ParseError):
    """The time budget ran out during recognition."""


@dataclass(frozen=True)
class OcrText:
    text: str
    confidence: float  # mean word confidence, 0-100, weighted by word length
    rotation: int  # degrees the picture was turned (counter-clockwise) before the kept reading

    @property
    def score(self) -> float:
        """Confidently read characters: the measure orientations are compared by."""
        return self.confidence * len(self.text.replace(" ", "").replace("\n", "")) / 100


class OcrBudget:
    """One file's OCR time: each image or page gets ``OCR_TIMEOUT_SECONDS``, all of them together
    a share of what the file has left of its time budget; a page that runs out is left out and
    the file goes on."""

    def __init__(self) -> None:
        self.seconds = OCR_SHARE_OF_FILE_BUDGET * budget_remaining()
        self._deadline = time.monotonic() + self.seconds
        self.timed_out = 0
        self.left_out = 0

    def read(self, load: Callable[[], Image.Image]) -> OcrText | None:
        """OCR of the image ``load`` returns (it is not called once the file's budget is spent)."""
        now = time.monotonic()
        if now >= self._deadline:
            self.left_out += 1
            return None
        try:
            return ocr_image(image=prepare(load()), deadline=min(now + settings.OCR_TIMEOUT_SECONDS, self._deadline))
        except OcrTimeout:
            self.timed_out += 1
            return None

    def shortfall(self) -> str:
        """Why some pages have no OCR text ("" when none ran out of time)."""
        timeout, spent = settings.OCR_TIMEOUT_SECONDS, f"{self.seconds:.0f}"
        if self.timed_out and self.left_out:
            return StoredMessage(
                gettext_noop(
                    "%(timed_out)s page(s) took longer than %(timeout)s s; %(left_out)s page(s) left out after"
                    " %(spent)s s of OCR (two thirds of the file's INDEX_FILE_TIME_BUDGET_SECONDS)"
                ),
                timed_out=self.timed_out,
                timeout=timeout,
                left_out=self.left_out,
                spent=spent,
            )
        if self.timed_out:
            return StoredMessage(
                gettext_noop("%(timed_out)s page(s) took longer than %(timeout)s s"),
                timed_out=self.timed_out,
                timeout=timeout,
            )
        if self.left_out:
            return StoredMessage(
                gettext_noop(
                    "%(left_out)s page(s) left out after %(spent)s s of OCR"
                    " (two thirds of the file's INDEX_FILE_TIME_BUDGET_SECONDS)"
                ),
                left_out=self.left_out,
                spent=spent,
            )
        return ""


def ocr_available() -> None:
    """Raises ``UnsupportedDocument`` with what to install when Tesseract or a language is missing."""
    missing = _missing_languages(settings.OCR_LANGUAGES)
    if missing is None:
        raise UnsupportedDocument(
            gettext_noop("OCR needs the tesseract program, which is not installed (run `make ocr`)")
        )
    if missing:
        packages = " ".join(f"tesseract-ocr-{language.lower().replace('_', '-')}" for language in missing)
        raise UnsupportedDocument(
            gettext_noop("OCR language data %(languages)s is not installed (apt-get install %(packages)s)"),
            languages=", ".join(missing),
            packages=packages,
        )


@functools.cache
def _installed_languages() -> frozenset[str] | None:
    import pytesseract

    try:
        return frozenset(pytesseract.get_languages(config=""))
    except (pytesseract.TesseractNotFoundError, pytesseract.TesseractError, OSError):
        return None


def _missing_languages(languages: str) -> list[str] | None:
    installed = _installed_languages()
    if installed is None:
        return None
    return [language for language in languages.split("+") if language not in installed]


def prepare(image: Image.Image) -> Image.Image:
    """Upright as the camera saw it (EXIF), grey, and no larger than the working size."""
    image = ImageOps.exif_transpose(image) or image
    if image.mode in {"RGBA", "LA", "P", "PA"}:
        # Transparent areas are often black underneath; text is usually drawn on white.
        background = Image.new("RGBA", image.size, "white")
        image = Image.alpha_composite(background, image.convert("RGBA"))
    if image.mode.startswith("I"):
        # 16-bit scans: converting straight to 8 bits clips everything above 255 to white.
        image = image.convert("I").point(lambda value: value / 256)
    image = image.convert("L")
    if max(image.size) > WORKING_SIDE:
        image.thumbnail((WORKING_SIDE, WORKING_SIDE), Image.Resampling.LANCZOS)
    return image


def ocr_image(*, image: Image.Image, deadline: float) -> OcrText | None:
    """The text in a prepared image, or None when nothing in it reads as text.

    ``deadline`` is a ``time.monotonic()`` value; past it, ``OcrTimeout`` is raised.
    """
    best = _read(image, rotation=0, deadline=deadline, detect_orientation=True)
    if best.confidence >= _CONFIDENT and best.score >= 10:
        return best
    # Every turn is read: a wrong one can still read a line or two with high confidence.
    for turn in _TURNS:
        try:
            reading = _read(image.rotate(turn, expand=True), rotation=turn, deadline=deadline, detect_orientation=False)
        except OcrTimeout:
            if _usable(best):
                break  # out of time for more turns: keep what was read
            raise
        if reading.score > best.score:
            best = reading
    return best if _usable(best) else None


def _usable(reading: OcrText) -> bool:
    return bool(reading.text) and reading.confidence >= _NOISE


def _read(image: Image.Image, *, rotation: int, deadline: float, detect_orientation: bool) -> OcrText:
    import pytesseract

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise OcrTimeout(f"OCR did not finish within {settings.OCR_TIMEOUT_SECONDS} s")
    # --psm 1: automatic layout with orientation detection; --psm 3: the same without it.
    config = "--psm 1" if detect_orientation else "--psm 3"
    try:
        data = pytesseract.image_to_data(
            image,
            lang=settings.OCR_LANGUAGES,
            config=config,
            timeout=max(1, int(remaining)),
            output_type=pytesseract.Output.DICT,
        )
    except pytesseract.TesseractError as exc:
        raise ParseError(gettext_noop("OCR failed: %(reason)s"), reason=exc.message or exc.status) from exc
    except RuntimeError as exc:
        # pytesseract kills the process and raises a bare RuntimeError when its timeout passes.
        if "timeout" in str(exc).lower():
            raise OcrTimeout(f"OCR did not finish within {settings.OCR_TIMEOUT_SECONDS} s") from exc
        raise ParseError(gettext_noop("OCR failed: %(reason)s"), reason=exc) from exc
    except OSError as exc:  # the tesseract program vanished or could not start
        raise ParseError(gettext_noop("OCR failed: %(reason)s"), reason=exc) from exc
    return _assemble(data, rotation=rotation)


def _assemble(data: dict[str, list], *, rotation: int) -> OcrText:
    """Words back into lines and paragraphs, in Tesseract's reading order."""
    lines: list[str] = []
    words: list[str] = []
    weighted = characters = 0.0
    previous: tuple[int, int, int] | None = None
    for index, word in enumerate(data["text"]):
        word = (word or "").strip()
        confidence = float(data["conf"][index])
        if not word or confidence < 0:
            continue
        line = (data["block_num"][index], data["par_num"][index], data["line_num"][index])
        if previous is not None and line != previous:
            lines.append(" ".join(words))
            if line[:2] != previous[:2]:
                lines.append("")
            words = []
        words.append(word)
        previous = line
        weighted += confidence * len(word)
        characters += len(word)
    if words:
        lines.append(" ".join(words))
    text = "\n".join(lines).strip()
    return OcrText(text=text, confidence=weighted / characters if characters else 0.0, rotation=rotation)

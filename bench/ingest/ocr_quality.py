"""OCR engines side by side on the same rendered images: Tesseract (Debian's tesseract-ocr through
pytesseract, the way the indexer runs it: ``apps/library/parsing/ocr.py``) and RapidOCR
(rapidocr-onnxruntime, PP-OCRv4 ONNX models from its wheel), one thread each, as in a worker.

Images are rendered here with Pillow (DejaVu from fonts-dejavu-core): a clean letter, the same
letter as noisy, tilted JPEG "photos" turned 90, 180 and 270 degrees, a receipt and its photo, a
dense page in an image-only PDF (rendered by PDFium as the indexer does) and a photo with no
text. Both engines get the same orientation handling: a first reading, then the other quarter
turns when it is not confident, keeping the most confident. Printed per image and engine:
character error rate (Levenshtein distance / reference length, whitespace collapsed), whether the
code a keyword search would look for is read exactly, and seconds.

    .venv/bin/python bench/ingest/ocr_quality.py            # both engines (-v: print what each read)
    .venv/bin/python bench/ingest/ocr_quality.py tesseract  # one
"""

from __future__ import annotations

import io
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.ingest.common import django_without_database

django_without_database()

from apps.library.parsing.ocr import ocr_image, prepare  # noqa: E402
from apps.library.parsing.pdf_scans import ScanReader  # noqa: E402
from tests.support.images import (  # noqa: E402
    LETTER,
    RECEIPT,
    jpeg,
    photo,
    receipt_image,
    scanned_pdf,
    text_image,
)

PAGE = [
    "Harbor View Properties - Tenancy terms, page 2",
    "4. The tenant pays the rent of 1,200 EUR on the 2nd day of",
    "each month by bank transfer, quoting reference LEASE-4B-2025.",
    "5. Heating and water are billed quarterly on meter readings;",
    "the landlord sends the statement within 30 days of each quarter.",
    "6. Either party may end the lease with three months' notice",
    "in writing, delivered to the addresses given on page 1.",
    "7. Pets are allowed with the landlord's written consent only.",
    "8. The deposit of 2,400 EUR is returned within 6 weeks.",
]


@dataclass(frozen=True)
class Case:
    name: str
    image: Image.Image
    reference: list[str]
    code: str


def _decoded(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data))


def _pdf_page(data: bytes) -> Image.Image:
    with ScanReader(data) as reader:
        return reader.render(1)


def _no_text_photo() -> Image.Image:
    rng = np.random.default_rng(3)
    image = Image.new("L", (1200, 900), 180)
    draw = ImageDraw.Draw(image)
    for _ in range(25):
        x, y = int(rng.integers(0, 1100)), int(rng.integers(0, 800))
        draw.ellipse(
            (x, y, x + int(rng.integers(40, 200)), y + int(rng.integers(40, 200))), fill=int(rng.integers(0, 255))
        )
    return Image.fromarray(np.clip(np.asarray(image) + rng.normal(0, 20, (900, 1200)), 0, 255).astype(np.uint8))


def _cases() -> list[Case]:
    letter = text_image(LETTER)
    receipt = receipt_image()
    small = letter.resize((letter.width // 2, letter.height // 2), Image.Resampling.LANCZOS)
    page = text_image(PAGE, size=22, width=1240)
    canvas = Image.new("L", (1240, 1754), 255)  # A4 at 150 dpi, as a scanner writes it
    canvas.paste(page, (0, 120))
    return [
        Case("letter, clean PNG", letter, LETTER, "INV-20931"),
        Case("letter photo, turned 90, JPEG", _decoded(jpeg(photo(letter, rotate=90))), LETTER, "INV-20931"),
        Case("letter photo, turned 180, JPEG", _decoded(jpeg(photo(letter, rotate=180))), LETTER, "INV-20931"),
        Case("letter photo, turned 270, JPEG", _decoded(jpeg(photo(letter, rotate=270))), LETTER, "INV-20931"),
        Case(
            "letter photo, small, turned 90, JPEG",
            _decoded(jpeg(photo(small, rotate=90), quality=45)),
            LETTER,
            "INV-20931",
        ),
        Case("receipt, PNG", receipt, RECEIPT, "0047-2291"),
        Case(
            "receipt photo, turned 90, JPEG", _decoded(jpeg(photo(receipt, rotate=90, seed=11))), RECEIPT, "0047-2291"
        ),
        Case("scanned PDF page (150 dpi)", _pdf_page(scanned_pdf([canvas])), PAGE, "LEASE-4B-2025"),
        Case("photo with no text, JPEG", _decoded(jpeg(_no_text_photo())), [], ""),
    ]


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def levenshtein(first: str, second: str) -> int:
    previous = list(range(len(second) + 1))
    for row, left in enumerate(first, start=1):
        current = [row]
        for column, right in enumerate(second, start=1):
            current.append(min(previous[column] + 1, current[column - 1] + 1, previous[column - 1] + (left != right)))
        previous = current
    return previous[-1]


def tesseract_engine() -> Callable[[Image.Image], str]:
    def read(image: Image.Image) -> str:
        reading = ocr_image(image=prepare(image), deadline=time.monotonic() + 60)
        return reading.text if reading else ""

    return read


def rapidocr_engine() -> Callable[[Image.Image], str]:
    from rapidocr_onnxruntime import RapidOCR

    engine = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)

    def reading(image: Image.Image) -> tuple[str, float, float]:
        boxes, _ = engine(np.asarray(image.convert("RGB")))
        if not boxes:
            return "", 0.0, 0.0
        # Boxes come roughly top to bottom; boxes whose centres share a line are joined left to right.
        rows: list[list[tuple[float, str]]] = []
        last_centre = last_height = -1.0
        for points, text, _ in sorted(boxes, key=lambda box: (box[0][0][1] + box[0][2][1]) / 2):
            centre = (points[0][1] + points[2][1]) / 2
            height = abs(points[2][1] - points[0][1])
            if rows and abs(centre - last_centre) < max(height, last_height) / 2:
                rows[-1].append((points[0][0], text))
            else:
                rows.append([(points[0][0], text)])
            last_centre, last_height = centre, height
        text = "\n".join(" ".join(part for _, part in sorted(row)) for row in rows)
        characters = sum(len(box[1]) for box in boxes)
        confidence = sum(float(box[2]) * len(box[1]) for box in boxes) / max(characters, 1)
        return text, confidence, confidence * characters

    def read(image: Image.Image) -> str:
        image = prepare(image)
        text, confidence, score = reading(image)
        if confidence >= 0.9 and score >= 10:
            return text
        for turn in (90, 180, 270):
            turned = reading(image.rotate(turn, expand=True))
            if turned[2] > score:
                text, confidence, score = turned
        return text if confidence >= 0.5 else ""

    return read


ENGINES = {"tesseract": tesseract_engine, "rapidocr": rapidocr_engine}


@dataclass(frozen=True)
class Result:
    cer: float  # on text with whitespace collapsed; for the no-text image: characters invented
    cer_letters: float  # with all whitespace removed: recognition alone, not spacing
    found: bool
    seconds: float
    text: str


def _result(case: Case, text: str, seconds: float) -> Result:
    reference, got = _collapse("\n".join(case.reference)), _collapse(text)
    if not reference:
        return Result(float(len(got)), float(len(got)), False, seconds, got)
    bare_reference, bare_got = reference.replace(" ", ""), got.replace(" ", "")
    return Result(
        levenshtein(reference, got) / len(reference),
        levenshtein(bare_reference, bare_got) / len(bare_reference),
        case.code in text,
        seconds,
        got,
    )


def _run(name: str, cases: list[Case]) -> list[Result] | None:
    started = time.monotonic()
    try:
        read = ENGINES[name]()
    except ImportError as exc:
        print(f"  {name}: not installed ({exc}); pip install -r requirements/bench.txt")
        return None
    read(cases[0].image)  # warm-up: loading models is not a per-image cost
    print(f"  {name}: start-up and warm-up {time.monotonic() - started:.1f} s")
    results = []
    for case in cases:
        started = time.monotonic()
        text = read(case.image)
        results.append(_result(case, text, time.monotonic() - started))
    return results


def main(selected: list[str]) -> None:
    cases = _cases()
    print(f"OCR quality: {len(cases)} images; load average {os.getloadavg()[0]:.2f}")
    results = {name: rows for name in selected or list(ENGINES) if (rows := _run(name, cases)) is not None}
    names = list(results)
    header = f"{'image':38}" + "".join(f" | {name:>9} CER  CER-ws code s/img" for name in names)
    print("\n" + header + "\n" + "-" * len(header))
    for index, case in enumerate(cases):
        line = f"{case.name:38}"
        for name in names:
            row = results[name][index]
            if case.reference:
                line += (
                    f" | {row.cer:13.3f} {row.cer_letters:7.3f} {'yes' if row.found else 'NO':>4} {row.seconds:5.2f}"
                )
            else:
                line += f" | {f'{int(row.cer)} chars invented':>26} {row.seconds:5.2f}"
        print(line)
    print("-" * len(header))
    line = f"{'mean over images with text':38}"
    for name in names:
        with_text = [row for row, case in zip(results[name], cases, strict=True) if case.reference]
        cer = sum(row.cer for row in with_text) / len(with_text)
        letters = sum(row.cer_letters for row in with_text) / len(with_text)
        found = f"{sum(row.found for row in with_text)}/{len(with_text)}"
        seconds = sum(row.seconds for row in results[name]) / len(cases)
        line += f" | {cer:13.3f} {letters:7.3f} {found:>4} {seconds:5.2f}"
    print(line)
    print("CER: whitespace collapsed; CER-ws: whitespace removed (recognition only); code: read exactly;")
    print("s/img: seconds per image, one thread, orientation search included (mean over every image).")
    if "-v" in sys.argv or os.environ.get("BENCH_VERBOSE"):
        for name in names:
            for case, row in zip(cases, results[name], strict=True):
                print(f"\n[{name}] {case.name}: {row.text}")


if __name__ == "__main__":
    main([arg for arg in sys.argv[1:] if not arg.startswith("-")])

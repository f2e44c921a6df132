"""Images with known text rendered by Pillow: clean scans, noisy rotated "photos", receipts and
image-only (scanned) PDFs. The OCR tests, the OCR bench and the sample folder generator use them."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

_DEJAVU = Path("/usr/share/fonts/truetype/dejavu")

LETTER = [
    "Northwind Studio - Invoice INV-20931",
    "Date: 16 December 2024",
    "Illustrations for Project Atlas",
    "Amount due: 4,250.00 EUR",
    "Payment within 30 days to IBAN",
    "DE44 5001 0517 5407 3249 31",
]
RECEIPT = [
    "HARBOR MARKET",
    "12 Quay Street, Portsmouth",
    "Receipt 0047-2291",
    "Coffee beans 1kg      18.90",
    "Oat milk x2            3.80",
    "Sourdough loaf         4.50",
    "TOTAL EUR             27.20",
    "Card ending 4821  APPROVED",
]


def font(size: int, *, mono: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """DejaVu (fonts-dejavu-core) when installed, else Pillow's own scalable default font."""
    path = _DEJAVU / ("DejaVuSansMono.ttf" if mono else "DejaVuSans.ttf")
    if path.exists():
        return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size)


def text_image(lines: list[str], *, size: int = 30, mono: bool = False, width: int = 1100) -> Image.Image:
    """Black text on white, one line per entry, like a clean 300 dpi scan."""
    face = font(size, mono=mono)
    line_height = int(size * 1.6)
    image = Image.new("L", (width, 80 + line_height * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((50, 40 + number * line_height), line, fill=0, font=face)
    return image


def receipt_image() -> Image.Image:
    """A narrow receipt in a monospaced face on slightly grey paper."""
    image = text_image(RECEIPT, size=24, mono=True, width=560)
    return image.point(lambda value: 235 if value > 200 else value)


def photo(image: Image.Image, *, rotate: int, seed: int = 7) -> Image.Image:
    """A phone "photo" of ``image``: turned by ``rotate`` degrees (counter-clockwise), tilted a
    little, unevenly lit, blurred and grainy."""
    rng = np.random.default_rng(seed)
    tilted = np.asarray(image.convert("L").rotate(1.5, expand=True, fillcolor=255, resample=Image.Resampling.BICUBIC))
    lighting = np.linspace(0.72, 1.0, tilted.shape[1])[np.newaxis, :]
    grainy = tilted * lighting + rng.normal(0, 18, tilted.shape)
    lit = Image.fromarray(np.clip(grainy, 0, 255).astype(np.uint8))
    blurred = lit.filter(ImageFilter.GaussianBlur(0.8))
    return blurred.rotate(rotate, expand=True, fillcolor=128) if rotate else blurred


def encoded(image: Image.Image, kind: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=kind, **options)
    return out.getvalue()


def jpeg(image: Image.Image, *, quality: int = 55) -> bytes:
    return encoded(image.convert("RGB"), "JPEG", quality=quality)


def png(image: Image.Image) -> bytes:
    return encoded(image, "PNG")


def scanned_pdf(pages: list[Image.Image], *, dpi: int = 150) -> bytes:
    """A PDF whose pages are only images: no text layer, as a scanner writes them."""
    first, *rest = [page.convert("RGB") for page in pages]
    return encoded(first, "PDF", save_all=True, append_images=rest, resolution=float(dpi))


def png_header(width: int, height: int) -> bytes:
    """A PNG that declares ``width`` x ``height`` grey pixels but holds only one row of them."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    row = zlib.compress(b"\x00" + b"\x80" * width)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", row) + chunk(b"IEND", b"")

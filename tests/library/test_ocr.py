"""OCR of images and scanned PDF pages with the real Tesseract, on images rendered by Pillow."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from pypdf import PdfReader, PdfWriter

from apps.library.budget import FileBudget, file_budget_running
from apps.library.chunking import RegexTokenizer, chunk_document
from apps.library.parsing import ParseError, UnsupportedDocument, parse_document
from apps.library.parsing import ocr as ocr_module
from apps.library.parsing.ocr import OcrBudget
from tests.support.documents import pdf_bytes
from tests.support.images import (
    LETTER,
    RECEIPT,
    encoded,
    jpeg,
    photo,
    png,
    png_header,
    receipt_image,
    scanned_pdf,
    text_image,
)

CODE = "INV-20931"


def parse(data: bytes, mime: str, name: str = "scan"):
    return parse_document(data=data, mime_type=mime, name=name)


def test_a_clean_png_is_read_and_its_text_marked_as_ocr():
    document = parse(png(text_image(LETTER)), "image/png", "invoice.png")
    assert CODE in document.text and "Amount due: 4,250.00 EUR" in document.text
    assert [(segment.page, segment.ocr) for segment in document.segments] == [(None, True)]


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_a_turned_noisy_jpeg_photo_is_read_upright(rotate):
    document = parse(jpeg(photo(text_image(LETTER), rotate=rotate)), "image/jpeg", "photo.jpg")
    assert CODE in document.text and "Project Atlas" in document.text


def test_a_receipt_keeps_its_lines_and_amounts():
    text = parse(png(receipt_image()), "image/png", "receipt.png").text
    assert "Receipt 0047-2291" in text and "TOTAL EUR 27.20" in text
    assert text.index("HARBOR MARKET") < text.index("TOTAL EUR")


def test_the_file_name_decides_when_the_type_is_vague_and_webp_and_heic_are_read():
    image = text_image(RECEIPT[:3])
    assert "0047-2291" in parse(png(image), "application/octet-stream", "receipt.png").text
    assert "0047-2291" in parse(encoded(image, "WEBP", quality=90), "image/webp").text
    from pillow_heif import register_heif_opener

    register_heif_opener()
    assert "0047-2291" in parse(encoded(image.convert("RGB"), "HEIF", quality=90), "image/heic").text


def test_a_sixteen_bit_grey_scan_is_read():
    # Ink at 10,000 and paper at 35,500 of 65,535: both above 255, so clipping would blank the page.
    scan = Image.fromarray(np.asarray(text_image(LETTER[:2]), dtype=np.uint16) * 100 + 10_000)
    assert scan.mode == "I;16"
    assert CODE in parse(png(scan), "image/png", "scan16.png").text


def test_each_page_of_a_multi_page_tiff_keeps_its_number():
    first, second = text_image(["Fax cover sheet for Dana"]), text_image([f"Please pay invoice {CODE}"])
    data = encoded(first, "TIFF", save_all=True, append_images=[second], compression="tiff_deflate")
    document = parse(data, "image/tiff", "fax.tiff")
    assert [(segment.page, segment.ocr) for segment in document.segments] == [(1, True), (2, True)]
    assert document.text.startswith("Fax cover sheet for Dana")
    assert document.text[document.segments[1].start :].startswith(f"Please pay invoice {CODE}")


def test_scanned_pdf_pages_are_read_with_their_page_numbers_next_to_text_pages():
    writer = PdfWriter()
    for data in (
        pdf_bytes(["Cover letter typed on a computer, with a text layer."]),
        scanned_pdf([text_image(["Scanned page two", f"Invoice {CODE} is paid."])]),
    ):
        writer.append(PdfReader(io.BytesIO(data)))
    out = io.BytesIO()
    writer.write(out)
    document = parse(out.getvalue(), "application/pdf", "mixed.pdf")
    assert [(segment.page, segment.ocr) for segment in document.segments] == [(1, False), (2, True)]
    assert document.text.startswith("Cover letter typed") and CODE in document.text[document.segments[1].start :]
    pieces = chunk_document(document=document, tokenizer=RegexTokenizer(), max_tokens=16, overlap_tokens=0)
    scanned = [piece.location for piece in pieces if CODE in piece.text]
    assert scanned and all(location["page"] == 2 and location["ocr"] is True for location in scanned)
    assert all("ocr" not in piece.location for piece in pieces if piece.location["page"] == 1)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "unreadable image"),
        (png(text_image(LETTER))[:600], "unreadable image"),
        (b"not an image at all", "unreadable image"),
    ],
)
def test_a_corrupt_or_truncated_image_fails_with_a_reason(data, reason):
    with pytest.raises(ParseError, match=reason):
        parse(data, "image/png", "broken.png")


def test_an_image_with_too_many_pixels_is_skipped_before_it_is_decoded(settings):
    settings.OCR_MAX_IMAGE_PIXELS = 100_000
    with pytest.raises(UnsupportedDocument, match=r"1100 x 272 pixels, more than the OCR limit of 100,000"):
        parse(png(text_image(LETTER[:4])), "image/png", "huge.png")


def test_a_decompression_bomb_is_skipped_without_decoding_it():
    # 30,000 x 30,000 pixels declared in a few bytes: Pillow refuses it at open.
    with pytest.raises(UnsupportedDocument, match="image too large to read safely"):
        parse(png_header(30_000, 30_000), "image/png", "bomb.png")


def test_a_picture_without_text_is_skipped():
    picture = Image.linear_gradient("L").resize((600, 400))
    with pytest.raises(UnsupportedDocument, match="no text found in the image"):
        parse(jpeg(picture), "image/jpeg", "sky.jpg")


def test_with_ocr_turned_off_images_and_scans_are_skipped_with_the_reason(settings):
    settings.OCR_ENABLED = False
    with pytest.raises(UnsupportedDocument, match=r"images need OCR, which is turned off \(OCR_ENABLED\)"):
        parse(png(text_image(LETTER)), "image/png", "invoice.png")
    with pytest.raises(UnsupportedDocument, match=r"no extractable text \(scanned pages need OCR, which is turned off"):
        parse(scanned_pdf([text_image(LETTER)]), "application/pdf", "scan.pdf")


def test_a_missing_tesseract_or_language_is_named_in_the_reason(settings, monkeypatch):
    import pytesseract

    settings.OCR_LANGUAGES = "eng+xyz_abc"
    with pytest.raises(
        UnsupportedDocument, match=r"xyz_abc is not installed \(apt-get install tesseract-ocr-xyz-abc\)"
    ):
        parse(png(text_image(LETTER)), "image/png")
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    ocr_module._installed_languages.cache_clear()
    try:
        with pytest.raises(UnsupportedDocument, match=r"tesseract program, which is not installed \(run `make ocr`\)"):
            parse(png(text_image(LETTER)), "image/png")
    finally:
        ocr_module._installed_languages.cache_clear()


def test_a_page_that_outlasts_the_time_budget_fails_the_file_with_the_reason(settings):
    settings.INDEX_FILE_TIME_BUDGET_SECONDS = 0
    with pytest.raises(ParseError, match=r"OCR did not finish: 1 page\(s\) left out after 0 s of OCR"):
        parse(png(text_image(LETTER)), "image/png")
    with pytest.raises(ParseError, match="OCR did not finish"):
        parse(scanned_pdf([text_image(LETTER)]), "application/pdf", "scan.pdf")


def test_a_600_page_tiff_is_bounded_by_the_ocr_budget_not_refused_for_its_length(settings):
    """No page limit (there was one of 500): every page counts against OCR's share of the budget,
    here none, so all 600 are left out with that reason instead of the file refused unread."""
    settings.INDEX_FILE_TIME_BUDGET_SECONDS = 0
    pages = [Image.new("L", (40, 40), 255) for _ in range(600)]
    data = encoded(pages[0], "TIFF", save_all=True, append_images=pages[1:], compression="tiff_deflate")
    with pytest.raises(ParseError, match=r"OCR did not finish: 600 page\(s\) left out after 0 s of OCR"):
        parse(data, "image/tiff", "archive.tiff")


def test_tesseract_is_stopped_when_one_image_runs_past_its_timeout(settings):
    settings.OCR_TIMEOUT_SECONDS = 1
    # A full 300 dpi page of small text: several seconds of recognition on any machine.
    page = text_image([" ".join(LETTER)[:110]] * 60, size=26, width=2480)
    with pytest.raises(ParseError, match=r"1 page\(s\) took longer than 1 s"):
        parse(png(page), "image/png", "dense.png")


def test_ocr_gets_two_thirds_of_what_the_file_has_left_of_its_budget(settings):
    """So the pages read are still chunked and embedded before the file's budget runs out."""
    settings.INDEX_FILE_TIME_BUDGET_SECONDS = 30
    with file_budget_running(FileBudget(seconds=30.0, spent=12.0)):
        assert OcrBudget().seconds == pytest.approx(12.0, abs=0.1)
    with file_budget_running(FileBudget(seconds=30.0, spent=40.0)):
        assert OcrBudget().seconds == 0
    assert OcrBudget().seconds == pytest.approx(20.0)  # outside indexing: a whole budget

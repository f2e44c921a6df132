"""Asking with a photographed receipt in a real browser: the image goes up with the question, a
Celery worker reads its text (Tesseract) and the offline answerer answers citing it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import SCREENSHOTS, log_in
from tests.support.images import jpeg, photo, receipt_image
from tests.support.questions import RECEIPT_QUESTION

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

LOADED = "image => image.complete && image.naturalWidth > 0"


def test_a_question_with_a_receipt_photo_is_answered_citing_the_image(
    page: Page, folder, celery_worker_process, tmp_path
) -> None:
    receipt = tmp_path / "receipt.jpg"
    receipt.write_bytes(jpeg(photo(receipt_image(), rotate=0)))  # tilted, unevenly lit, grainy
    log_in(page)
    page.goto(f"/folders/{folder.pk}/")
    attach = page.get_by_label("Attach images")
    chosen = page.get_by_role("list", name="Images to send")

    # Not a picture, whatever its name says: the server's reason is shown and nothing is asked.
    attach.set_input_files({"name": "notes.png", "mimeType": "image/png", "buffer": b"shopping list: milk, eggs\n"})
    page.get_by_label("Your question").fill(RECEIPT_QUESTION)
    page.get_by_label("Your question").press("Enter")
    expect(page.locator("#run-status")).to_have_text(
        "notes.png is not a picture in a known format; attach PNG, JPEG, WebP, GIF or HEIC images."
    )
    expect(page.locator(".message-user")).to_have_count(0)
    page.get_by_role("button", name="Remove notes.png").click()
    expect(chosen).to_be_hidden()

    attach.set_input_files(str(receipt))
    expect(chosen.get_by_role("img", name="receipt.jpg")).to_be_visible()
    page.get_by_label("Your question").press("Enter")

    asked = page.locator(".message-user")
    expect(asked).to_contain_text(RECEIPT_QUESTION)
    expect(asked.get_by_role("img", name="receipt.jpg")).to_be_visible()
    expect(chosen).to_be_hidden()  # the composer starts empty again
    expect(page.locator("#run-status")).to_have_text("Answer ready.", timeout=30_000)
    answer = page.locator(".message-agent").last
    expect(answer.locator(".answer")).to_contain_text("TOTAL EUR 27.20 [1].")
    expect(answer.locator(".answer")).to_contain_text("Read the text of 1 attached image.")
    cited = answer.get_by_role("link", name="Source 1: receipt.jpg · image 1, text read by OCR")
    expect(cited).to_have_attribute("href", re.compile(r"^/api/attachments/\d+$"))
    expect(answer.locator(".sources")).to_contain_text("receipt.jpg · image 1, text read by OCR")

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "chat-image.png")

    # Kept with the question: a reload shows the thumbnail, served by the API to its asker.
    page.reload()
    thumbnail = page.locator(".message-user").get_by_role("img", name="receipt.jpg")
    expect(thumbnail).to_be_visible()
    expect(thumbnail).to_have_attribute("src", cited.get_attribute("href") or "")
    page.wait_for_function(f"({LOADED})(document.querySelector('.message-user img'))")
    expect(page.locator(".message-agent").last.locator(".cite").first).to_be_visible()

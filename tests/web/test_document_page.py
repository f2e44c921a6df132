"""The document page in a real browser: a citation opens the cited passage highlighted (a PDF at its
page), at 1280 and 390 px and by keyboard; a folder's HTML and SVG never run script here."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect

from apps.library.models import Folder
from tests.support.browser import SCREENSHOTS, log_in
from tests.support.chat_library import add_file
from tests.support.documents import pdf_bytes
from tests.support.files import write
from tests.support.originals import add_chunks, file_row

pytestmark = [pytest.mark.django_db(transaction=True)]

W2_QUESTION = "How much federal income tax was withheld on the 2024 W-2?"
W2_PAGES = [
    "Form W-2 Wage and Tax Statement 2024\nEmployer: Acme Corporation",
    "Box 1 wages: 84,500 dollars\nBox 2 federal income tax withheld: 12,300 dollars",
]
# Each sets a mark where it could be read back if its script ever ran.
SVG_WITH_SCRIPT = (
    b"<svg xmlns='http://www.w3.org/2000/svg' width='40' height='40'>"
    b"<script>document.documentElement.setAttribute('data-ran', 'yes');</script>"
    b"<rect width='40' height='40' fill='teal'/></svg>"
)
HTML_WITH_SCRIPT = b"<!doctype html><title>page</title><script>localStorage.setItem('pwned', 'yes');</script>"


@pytest.fixture
def disk_folder(user, tmp_path) -> Iterator[tuple[Folder, Path]]:
    """A local folder whose files are on disk, indexed as rows with known chunks and locations."""
    root = tmp_path / "household"
    write(root, "taxes/2024/W2_Acme_2024.pdf", pdf_bytes(W2_PAGES))
    folder = Folder.objects.create(
        owner=user,
        source="local",
        external_id=str(root),
        name="Household documents",
        status="ready",
        last_synced_at=timezone.now(),
        sync_interval_seconds=86_400,  # no sync from chat start: the rows are the index
    )
    file = add_file(
        folder=folder,
        path="taxes/2024/W2_Acme_2024.pdf",
        chunks=[
            ("Form W-2 Wage and Tax Statement 2024. Employer: Acme Corporation.", {"page": 1}),
            ("Box 1 wages, tips and other compensation: 84,500 dollars.", {"page": 2}),
            ("Box 2 federal income tax withheld on the 2024 W-2: 12,300 dollars.", {"page": 2}),
        ],
    )
    file.mime_type = "application/pdf"
    file.save(update_fields=["mime_type"])
    yield folder, root


@pytest.mark.worker
def test_a_citation_opens_the_cited_passage_highlighted_and_the_pdf_at_its_page(
    page: Page, disk_folder, celery_worker_process
) -> None:
    folder, _ = disk_folder
    log_in(page)
    page.goto(f"/folders/{folder.pk}/")
    page.get_by_label("Your question").fill(W2_QUESTION)
    page.get_by_label("Your question").press("Enter")
    expect(page.locator("#run-status")).to_have_text("Answer ready.")

    page.locator(".message-agent .answer .cite").first.click()

    expect(page).to_have_url(re.compile(r"/files/\d+\?chunk=\d+(&quote=\S+)?$"))
    expect(page.get_by_role("heading", level=1, name="W2_Acme_2024.pdf")).to_be_visible()
    cited = page.locator(".chunk.cited")
    expect(cited.locator("mark")).to_contain_text("12,300 dollars")
    expect(cited).to_contain_text("page 2")
    expect(cited).to_be_focused()
    expect(cited).to_be_in_viewport()
    expect(page.locator(".chunk")).to_have_count(3)  # the whole text, in order
    expect(page.locator(".chunk").first).to_contain_text("Acme Corporation")
    pdf = page.locator("#pdf-view")
    expect(pdf).to_have_attribute("src", re.compile(r"^/api/files/\d+/content#page=2$"))
    original = page.request.get(pdf.get_attribute("src").split("#")[0], headers={"Range": "bytes=0-4"})
    assert original.status == 206 and original.body() == b"%PDF-"
    download = page.get_by_role("link", name="Download original")
    expect(download).to_have_attribute("href", re.compile(r"^/api/files/\d+/content$"))
    expect(page.get_by_role("link", name="Open in Google Drive")).to_have_count(0)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "document.png")

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(page.locator(".chunk.cited mark")).to_be_in_viewport()
    # The document itself fits (the top bar's own fit at 390 px is the header's, not this page's).
    too_wide = page.evaluate(
        "[...document.querySelectorAll('#document *')].filter(e => e.getBoundingClientRect().right > 390).length"
    )
    assert too_wide == 0, "the document overflows 390 px"
    page.screenshot(path=SCREENSHOTS / "document-390.png")


def test_the_document_page_works_by_keyboard(page: Page, disk_folder) -> None:
    folder, _ = disk_folder
    file = folder.files.get()
    log_in(page)
    page.goto(f"/files/{file.pk}")
    expect(page.locator(".chunk")).to_have_count(3)
    download = page.get_by_role("link", name="Download original")
    for _ in range(15):
        if download.evaluate("element => element === document.activeElement"):
            break
        page.keyboard.press("Tab")
    expect(download).to_be_focused()
    with page.expect_download() as started:
        page.keyboard.press("Enter")
    assert started.value.suggested_filename == "W2_Acme_2024.pdf"


def test_an_image_is_shown_beside_its_ocr_text(page: Page, disk_folder) -> None:
    folder, root = disk_folder
    write(root, "scans/receipt.svg", SVG_WITH_SCRIPT)
    image = file_row(folder=folder, path="scans/receipt.svg", mime_type="image/svg+xml")
    add_chunks(file=image, chunks=[("RECEIPT total 42.00 EUR", {"ocr": True})])
    log_in(page)
    page.goto(f"/files/{image.pk}")
    picture = page.get_by_role("img", name="receipt.svg")
    expect(picture).to_be_visible()
    assert picture.evaluate("element => element.naturalWidth") == 40
    expect(page.get_by_role("heading", name="Text read from the image")).to_be_visible()
    expect(page.locator(".chunk")).to_contain_text("RECEIPT total 42.00 EUR")
    expect(page.locator(".chunk-location")).to_contain_text("text read by OCR")


def test_a_folders_svg_and_html_never_run_script_in_the_products_origin(page: Page, disk_folder) -> None:
    folder, root = disk_folder
    write(root, "web/drawing.svg", SVG_WITH_SCRIPT)
    write(root, "web/page.html", HTML_WITH_SCRIPT)
    svg = file_row(folder=folder, path="web/drawing.svg", mime_type="image/svg+xml")
    html = file_row(folder=folder, path="web/page.html", mime_type="text/html")
    log_in(page)

    # Opened directly the SVG renders, sandboxed: an opaque origin with scripts off.
    response = page.goto(f"/api/files/{svg.pk}/content")
    assert response is not None and response.status == 200
    expect(page.locator("rect")).to_have_count(1)
    assert page.evaluate("document.documentElement.getAttribute('data-ran')") is None
    assert page.evaluate("window.origin") == "null"

    # The HTML is an attachment: a navigation to it downloads it instead of rendering it.
    with page.expect_download() as started, pytest.raises(PlaywrightError, match="Download is starting"):
        page.goto(f"/api/files/{html.pk}/content")
    assert started.value.suggested_filename == "page.html"
    # Framed by a page of ours, it is not rendered either (an attachment), so its script never runs.
    page.goto(f"/files/{html.pk}")
    page.evaluate(
        """url => new Promise(resolve => {
            const frame = document.createElement("iframe");
            frame.src = url;
            frame.onload = resolve;
            document.body.append(frame);
            setTimeout(resolve, 1500);
        })""",
        f"/api/files/{html.pk}/content",
    )
    assert page.evaluate("localStorage.getItem('pwned')") is None


def test_overlapping_chunks_read_once_and_earlier_and_later_pages_load_on_request(page: Page, disk_folder) -> None:
    folder, _ = disk_folder
    text = "".join(f"Sentence {index:03d}. " for index in range(120))  # 15 characters each
    book = file_row(folder=folder, path="book.txt")
    # Chunk i spans sentences i..i+1: each overlaps the next by one sentence, as chunking makes them.
    spans = [(15 * index, min(15 * (index + 2), len(text))) for index in range(120)]
    chunks = add_chunks(
        file=book, chunks=[(text[start:end], {"char_start": start, "char_end": end}) for start, end in spans]
    )
    cited = chunks[70]  # on the second page of 50
    log_in(page)
    page.goto(f"/files/{book.pk}?chunk={cited.pk}")
    expect(page.locator(".chunk.cited mark")).to_have_text(text[15 * 70 : 15 * 72])
    expect(page.locator(".chunk")).to_have_count(50)
    earlier = page.get_by_role("button", name="Show earlier text")
    expect(earlier).to_be_visible()
    earlier.click()
    expect(page.locator(".chunk")).to_have_count(100)
    page.get_by_role("button", name="Show more text").click()
    expect(page.locator(".chunk")).to_have_count(120)
    expect(page.get_by_role("button", name="Show more text")).to_be_hidden()
    # Read end to end, the text is the document's once: the cited chunk whole, the others trimmed.
    shown = "".join(page.locator(".chunk-text").all_text_contents())
    assert shown == text


@pytest.mark.worker
def test_an_agent_steps_passage_opens_its_document(page: Page, disk_folder, celery_worker_process) -> None:
    folder, _ = disk_folder
    log_in(page)
    page.goto(f"/folders/{folder.pk}/")
    page.get_by_role("switch", name="Agent mode — slower, more thorough").check()
    page.get_by_label("Your question").fill(W2_QUESTION)
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#run-status")).to_have_text("Answer ready.", timeout=30_000)
    step = page.locator(".message-agent .step").first
    step.locator("summary").click()
    found = step.get_by_role("list", name="Passages found").get_by_role("link")
    expect(found.first).to_contain_text("W2_Acme_2024.pdf")
    found.filter(has_text="page 2").first.click()
    expect(page).to_have_url(re.compile(r"/files/\d+\?chunk=\d+(&quote=\S+)?$"))
    expect(page.locator(".chunk.cited")).to_contain_text("page 2")
    expect(page.locator(".chunk.cited mark")).to_be_visible()

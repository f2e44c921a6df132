"""Uploading into the inbox from the page, through the real worker: upload -> indexed -> suggestion
card -> accept -> undo; a refused file (an executable named .pdf, dropped on the page) says why."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from apps.library.indexing import folder_index
from apps.library.models import File, Folder
from tests.support.browser import SCREENSHOTS, log_in
from tests.support.sample_folder import SAMPLE
from tests.support.servers import BASE_DIR

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

FORM_1099 = (
    "Form 1099-INT Interest Income 2024\n\nPayer: Harbor Savings Bank\nRecipient: Alex Morgan\n"
    "Box 1 Interest income: 412.10\nBox 4 Federal income tax withheld: 0.00\n"
    "Keep this form with your tax return.\n"
)
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00\x3e\x00\x01\x00\x00\x00" + b"\x00" * 200


@pytest.fixture
def organized(user, monkeypatch) -> Iterator[tuple[Folder, Path]]:
    """The sample folder with an empty inbox, indexed here (its guideline sends tax forms to taxes/)."""
    root = BASE_DIR / "var" / "folders" / f"web-upload-{uuid.uuid4().hex[:8]}"
    shutil.copytree(SAMPLE, root, ignore=lambda directory, names: names if directory.endswith("inbox") else [])
    folder = Folder.objects.create(owner=user, source="local", external_id=str(root), name="Household")
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", lambda *args: None)
    folder_index(folder_id=folder.pk, inline=True)
    yield folder, root
    shutil.rmtree(root, ignore_errors=True)


def test_an_uploaded_file_is_indexed_suggested_accepted_and_undone(
    page: Page, organized, celery_worker_process
) -> None:
    folder, root = organized
    log_in(page)
    page.goto("/inbox/")
    expect(page.get_by_role("status").first).to_contain_text("Your inbox is empty")
    expect(page.locator("#inbox-folder")).to_have_value(str(folder.pk))

    page.locator("#inbox-upload-input").set_input_files(
        files=[{"name": "1099-INT_2024.txt", "mimeType": "text/plain", "buffer": FORM_1099.encode()}]
    )
    upload_status = page.locator("#inbox-upload-status")
    expect(upload_status).to_contain_text("Saved inbox/1099-INT_2024.txt.")
    assert (root / "inbox" / "1099-INT_2024.txt").read_text() == FORM_1099

    card = page.locator(".file-card").filter(has_text="1099-INT_2024.txt")  # indexed, then suggested
    expect(card).to_contain_text("Move to taxes/", timeout=60_000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "inbox-upload.png")
    assert File.objects.get(folder=folder, path="inbox/1099-INT_2024.txt").status == "indexed"
    card.get_by_role("button", name="Move to taxes/").first.click()
    expect(card.get_by_role("status")).to_have_text("Moved to taxes/.")
    assert (root / "taxes" / "1099-INT_2024.txt").exists() and not (root / "inbox" / "1099-INT_2024.txt").exists()
    card.get_by_role("button", name="Undo the move of 1099-INT_2024.txt").click()
    expect(card.get_by_role("status")).to_have_text("Moved back to inbox/1099-INT_2024.txt.")
    assert (root / "inbox" / "1099-INT_2024.txt").read_text() == FORM_1099

    # Dropped on the page: an executable dressed as a PDF is refused with the reason, nothing written.
    page.evaluate(
        """(bytes) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([new Uint8Array(bytes)], "statement.pdf", { type: "application/pdf" }));
            for (const type of ["dragover", "drop"]) {
                const event = new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: transfer });
                document.body.dispatchEvent(event);
            }
        }""",
        list(ELF),
    )
    expect(upload_status).to_have_text(
        "statement.pdf was not uploaded: statement.pdf is an executable program; it cannot be indexed."
    )
    assert sorted(path.name for path in (root / "inbox").iterdir()) == ["1099-INT_2024.txt"]

"""The inbox after moves and undos (issue #41, items 7 and 8): a typed "move X to Y" acts on the
file it names wherever it is, and says so once; an undone move leaves the file actionable in the
inbox (its suggestion open again, or its waiting row back), live and after a reload; an inbox
listing counts its files again after each move and undo."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from apps.library.models import File, Folder
from apps.organize.services import suggestion_create
from tests.support.browser import log_in
from tests.support.inbox_pages import inbox_ask, indexed_local_folder

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

LEASE = "inbox/lease-renewal.txt"
RECEIPT = "inbox/receipt-bird-feeder.txt"
BILL = "inbox/utility-bill-oct.txt"


@pytest.fixture
def papers(user, monkeypatch) -> Iterator[tuple[Folder, Path]]:
    """A local folder on disk: four unsorted files in its inbox and filed ones in four folders, indexed."""
    files = {
        LEASE: "The lease of the flat renews on June 1; rent rises to 1,450.\n",
        "inbox/w2-2024.txt": "Form W-2 for 2024: federal income tax withheld 12,300 dollars.\n",
        RECEIPT: "Receipt: one bird feeder, 24 dollars, garden centre.\n",
        BILL: "Electricity bill for October: 84 dollars, due November 15.\n",
        "finance/budget-2025.md": "# Budget 2025\n\nRent 1,450 a month; groceries 400.\n",
        "housing/rent-2024.txt": "Rent paid for 2024: twelve payments of 1,400.\n",
        "holidays/ferry-2024.txt": "Ferry to the island, booked for August 3.\n",
        "garden/seeds.txt": "Seeds to sow in spring: peas, beans.\n",
    }
    with indexed_local_folder(user=user, monkeypatch=monkeypatch, name="Papers", files=files) as made:
        yield made


def suggest(folder: Folder, path: str, target: str) -> None:
    suggestion_create(
        file=File.objects.get(folder=folder, path=path), target=target, reasoning="A guess.", confidence=0.8
    )


def test_a_typed_move_acts_on_the_file_it_names_wherever_it_is(page: Page, papers, celery_worker_process) -> None:
    folder, root = papers
    for path, target in ((LEASE, "housing/"), ("inbox/w2-2024.txt", "finance/"), (RECEIPT, "garden/")):
        suggest(folder, path, target)
    log_in(page)
    page.goto("/inbox/")
    expect(page.locator(".suggestion-item")).to_have_count(3)

    inbox_ask(page, "move utility-bill-oct.txt to finance")
    assert (root / "finance" / "utility-bill-oct.txt").is_file()
    # Said once, by the move itself (with its Undo); the answer only counts.
    expect(page.locator("#inbox-feed > li").filter(has_text="to finance/utility-bill-oct.txt")).to_have_count(1)
    expect(page.locator("li.message.message-agent .answer").last).to_have_text("Done: moved 1 file.")

    inbox_ask(page, "move finance/budget-2025.md to finance")
    expect(page.locator("li.message.message-agent .answer").last).to_have_text(
        "finance/budget-2025.md is already in finance/."
    )
    expect(page.locator(".suggestion-item")).to_have_count(3)  # no suggestions about other files

    # The bill left the inbox: named again, it is that file that moves, not the inbox that is talked about.
    inbox_ask(page, "move utility-bill-oct.txt to holidays")
    moved = page.locator(".move-item").filter(has_text="Moved finance/utility-bill-oct.txt to holidays/")
    expect(moved).to_be_visible()
    expect(page.locator("#inbox-feed > li").filter(has_text="nothing in inbox/")).to_have_count(0)
    assert (root / "holidays" / "utility-bill-oct.txt").is_file()
    assert not (root / "finance" / "utility-bill-oct.txt").exists()


def test_after_undo_the_file_waits_actionable_and_listings_count_again(
    page: Page, papers, celery_worker_process
) -> None:
    folder, root = papers
    suggest(folder, LEASE, "housing/")
    suggest(folder, "inbox/w2-2024.txt", "finance/")
    log_in(page)
    page.goto("/inbox/")
    receipt_row = page.get_by_role("article", name="Waiting in the inbox: receipt-bird-feeder.txt")
    expect(receipt_row).to_be_visible()

    inbox_ask(page, "what's in my inbox?")
    listing = page.locator(".result-item").last
    expect(listing.locator(".result-heading")).to_have_text("4 files in the inbox")

    card = page.locator(".suggestion-item").filter(has_text="lease-renewal.txt")
    card.get_by_role("button", name="Move to housing/").click()
    expect(card.get_by_role("status")).to_have_text("Moved to housing/.")
    expect(listing.locator(".result-heading")).to_have_text("3 files in the inbox")
    card.get_by_role("button", name="Undo the move of lease-renewal.txt").click()
    expect(card.get_by_role("status")).to_have_text("Moved back to inbox/lease-renewal.txt.")
    expect(listing.locator(".result-heading")).to_have_text("4 files in the inbox")
    # Undone, the suggestion is open again: the card offers its choices once more.
    for choice in ("Move to housing/", "Keep in Inbox", "Choose another folder…"):
        expect(card.get_by_role("button", name=choice)).to_be_visible()
        expect(card.get_by_role("button", name=choice)).to_be_enabled()

    inbox_ask(page, "move receipt-bird-feeder.txt to garden")
    expect(receipt_row).to_have_count(0)  # it left the inbox
    expect(listing.locator(".result-heading")).to_have_text("3 files in the inbox")
    page.locator(".move-item").filter(has_text="Moved inbox/receipt-bird-feeder.txt to garden/").get_by_role(
        "button", name="Undo the move of receipt-bird-feeder.txt"
    ).click()
    expect(receipt_row).to_be_visible()  # back in the inbox, without a suggestion
    expect(receipt_row.get_by_role("button", name="Suggest a folder")).to_be_enabled()
    expect(listing.locator(".result-heading")).to_have_text("4 files in the inbox")
    assert (root / RECEIPT).is_file() and (root / LEASE).is_file()

    page.reload()
    card = page.locator(".suggestion-item").filter(has_text="lease-renewal.txt")
    expect(card.get_by_role("button", name="Move to housing/")).to_be_visible()
    expect(card.get_by_role("button", name="Move to housing/")).to_be_enabled()
    expect(receipt_row.get_by_role("button", name="Suggest a folder")).to_be_enabled()
    card.get_by_role("button", name="Move to housing/").click()  # and it still works
    expect(card.get_by_role("status")).to_have_text("Moved to housing/.")
    assert (root / "housing" / "lease-renewal.txt").is_file()

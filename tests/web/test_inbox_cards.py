"""The inbox page's cards (issue #30): files found as cards that open and move, a clarifying
question's answers as buttons, "Choose another folder" from the folder tree, "Accept all above
N%", and suggestion cards leaving once their file has moved by another path."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from apps.library.models import File, Folder
from apps.organize.services import suggestion_create
from tests.support.browser import log_in
from tests.support.inbox_pages import inbox_ask, indexed_local_folder

pytestmark = pytest.mark.django_db(transaction=True)

LEASE = "inbox/lease-renewal.txt"


@pytest.fixture
def home(user, monkeypatch) -> Iterator[tuple[Folder, Path]]:
    """A local folder on disk: three unsorted files in its inbox and three filed ones, indexed."""
    files = {
        LEASE: "The lease of the flat renews on June 1; rent rises to 1,450.\n",
        "inbox/w2-2024.txt": "Form W-2 for 2024: federal income tax withheld 12,300 dollars.\n",
        "inbox/receipt-bird-feeder.txt": "Receipt: one bird feeder, 24 dollars, garden centre.\n",
        "housing/rent-2024.txt": "Rent paid for 2024: twelve payments of 1,400.\n",
        "taxes/2023/w2-2023.txt": "Form W-2 for 2023.\n",
        "garden/seeds.txt": "Seeds to sow in spring: peas, beans.\n",
    }
    with indexed_local_folder(user=user, monkeypatch=monkeypatch, name="Home papers", files=files) as made:
        yield made


@pytest.mark.worker
def test_found_files_are_cards_that_open_and_move_and_a_question_offers_buttons(
    page: Page, home, celery_worker_process
) -> None:
    folder, root = home
    lease = File.objects.get(folder=folder, path=LEASE)
    suggestion_create(file=lease, target="taxes/", reasoning="A guess.", confidence=0.55)
    log_in(page)
    page.goto("/inbox/")
    offered = page.locator(".suggestion-item").filter(has_text="lease-renewal.txt")
    expect(offered).to_contain_text("Home papers")  # each card names its folder

    inbox_ask(page, "find the lease renewal")

    card = page.locator(".result-card").filter(has_text="lease-renewal.txt")
    expect(card).to_contain_text("Home papers · in inbox/")
    expect(card).to_contain_text("rent rises to 1,450")
    expect(card.get_by_role("link", name="Open lease-renewal.txt")).to_have_attribute("href", f"/files/{lease.pk}")

    card.get_by_role("button", name="Move lease-renewal.txt…").click()
    card.get_by_role("searchbox", name="Move lease-renewal.txt to").fill("hous")
    expect(card.get_by_role("button", name="Move to garden/")).to_have_count(0)
    card.get_by_role("button", name="Move to housing/").click()
    expect(page.locator("#inbox-run-status")).to_have_text("Answered.", timeout=30_000)
    expect(page.locator(".move-item").filter(has_text="Moved inbox/lease-renewal.txt to housing/")).to_be_visible()
    assert (root / "housing" / "lease-renewal.txt").is_file()
    expect(card).to_contain_text("in housing/")  # the card follows the file
    expect(offered).to_have_count(0)  # the suggestion about it left with it

    inbox_ask(page, "taxes")
    question = page.locator(".clarification-item")
    expect(question).to_have_count(1)
    expect(page.locator(".feed-item").filter(has_text="I'm not sure what you'd like me to do")).to_have_count(1)
    question.get_by_role("button", name="What's in my inbox?").click()
    expect(page.locator(".message-user").last).to_have_text(re.compile("What's in my inbox?"))
    expect(page.locator("#inbox-run-status")).to_have_text("Answered.", timeout=30_000)
    listing = page.locator(".result-item").last
    expect(listing).to_contain_text("2 files in the inbox")
    expect(listing.locator(".result-card")).to_have_count(2)
    expect(listing).to_contain_text("No suggestion yet")

    page.reload()  # what was live is there after a reload: cards and the question's buttons
    expect(page.locator(".result-card").filter(has_text="lease-renewal.txt").first).to_contain_text("Home papers")
    expect(page.locator(".clarification-item").get_by_role("button", name="Organize my inbox")).to_be_visible()


def test_choose_another_folder_opens_the_folder_tree_searchable_by_name(page: Page, home) -> None:
    folder, root = home
    receipt = File.objects.get(folder=folder, path="inbox/receipt-bird-feeder.txt")
    suggestion_create(file=receipt, target="housing/", reasoning="Bought for the house.", confidence=0.7)
    log_in(page)
    page.goto("/inbox/")
    card = page.locator(".suggestion-item").filter(has_text="receipt-bird-feeder.txt")
    expect(card).to_contain_text("Home papers")

    card.get_by_role("button", name="Choose another folder…").click()
    tree = card.get_by_role("list", name="Destination folder for receipt-bird-feeder.txt: folders")
    expect(tree.get_by_role("button", name="Move to taxes/2023/")).to_be_visible()  # nested folders too
    expect(tree.get_by_role("button", name="Move to inbox/")).to_have_count(0)
    card.get_by_role("searchbox", name="Destination folder for receipt-bird-feeder.txt").fill("GARD")
    expect(tree.get_by_role("button")).to_have_count(1)
    tree.get_by_role("button", name="Move to garden/").click()

    expect(card.get_by_role("status").first).to_have_text("Moved to garden/.")
    assert (root / "garden" / "receipt-bird-feeder.txt").is_file()


def test_accept_all_above_a_percentage_moves_those_and_their_cards_go(page: Page, home) -> None:
    folder, root = home
    files = {path: File.objects.get(folder=folder, path=path) for path in ("inbox/w2-2024.txt", LEASE)}
    suggestion_create(file=files["inbox/w2-2024.txt"], target="taxes/", reasoning="A W-2.", confidence=0.95)
    suggestion_create(file=files[LEASE], target="housing/", reasoning="A lease.", confidence=0.9)
    receipt = File.objects.get(folder=folder, path="inbox/receipt-bird-feeder.txt")
    suggestion_create(file=receipt, target="garden/", reasoning="Perhaps.", confidence=0.5)
    log_in(page)
    page.goto("/inbox/")
    expect(page.locator(".suggestion-item")).to_have_count(3)

    page.get_by_label("Least sure (%)").fill("85")
    page.get_by_role("button", name="Accept all above 85%").click()

    expect(page.get_by_role("form", name="Accept many suggestions").get_by_role("status")).to_have_text(
        "Moved 2 files."
    )
    expect(page.locator(".suggestion-item")).to_have_count(1)
    expect(page.locator(".suggestion-item")).to_contain_text("receipt-bird-feeder.txt")
    assert (root / "taxes" / "w2-2024.txt").is_file() and (root / "housing" / "lease-renewal.txt").is_file()
    assert (root / "inbox" / "receipt-bird-feeder.txt").is_file()

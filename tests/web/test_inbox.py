"""The inbox page: talking to the assistant, suggestions arriving live, accept then undo, auto-moves."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from apps.library.indexing import folder_index
from apps.library.models import File, Folder
from apps.organize.decisions import suggestion_auto_move
from apps.organize.services import suggestion_create
from tests.support.browser import SCREENSHOTS, log_in
from tests.support.servers import BASE_DIR

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def household(user, monkeypatch) -> Iterator[tuple[Folder, Path]]:
    """A local folder on disk with two unsorted files in its inbox, indexed."""
    root = BASE_DIR / "var" / "folders" / f"web-inbox-{uuid.uuid4().hex[:8]}"
    (root / "inbox").mkdir(parents=True)
    (root / "housing").mkdir()
    (root / "inbox" / "lease-renewal.txt").write_text("The lease of the flat renews on June 1; rent rises to 1,450.\n")
    (root / "inbox" / "w2-2024.txt").write_text("Form W-2 for 2024: federal income tax withheld 12,300 dollars.\n")
    folder = Folder.objects.create(owner=user, source="local", external_id=str(root), name="Household")
    # Suggestions come from this test, not from the digest hook's task.
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", lambda *args: None)
    folder_index(folder_id=folder.pk, inline=True)
    yield folder, root
    shutil.rmtree(root, ignore_errors=True)


def test_a_suggestion_arrives_live_is_accepted_then_undone(page: Page, household) -> None:
    folder, root = household
    log_in(page)
    page.goto("/inbox/")
    # No suggestion yet: the file waits in the list, with "Suggest a folder".
    waiting = page.get_by_role("article", name="Waiting in the inbox: lease-renewal.txt")
    expect(waiting).to_contain_text("No suggestion: No folder fitted it well enough to suggest one.")

    lease = File.objects.get(folder=folder, path="inbox/lease-renewal.txt")
    suggestion_create(
        file=lease,
        target="housing/",
        reasoning="A lease belongs with the other housing papers.",
        confidence=0.86,
        alternatives=[{"folder": "contracts/", "reasoning": "It is a contract."}],
    )
    card = page.locator(".file-card").filter(has_text="lease-renewal.txt")  # from the inbox's stream
    expect(card).to_contain_text("Move to housing/ (86% sure)")
    expect(waiting).to_have_count(0)
    card.get_by_role("button", name="Choose another folder…").click()
    expect(card.get_by_role("button", name="Move to contracts/")).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "inbox.png")

    card.get_by_role("button", name="Move to housing/").first.click()
    expect(card.get_by_role("status")).to_have_text("Moved to housing/.")
    assert (root / "housing" / "lease-renewal.txt").exists()
    assert not (root / "inbox" / "lease-renewal.txt").exists()

    card.get_by_role("button", name="Undo the move of lease-renewal.txt").click()
    expect(card.get_by_role("status")).to_have_text("Moved back to inbox/lease-renewal.txt.")
    assert (root / "inbox" / "lease-renewal.txt").exists()
    assert File.objects.get(pk=lease.pk).path == "inbox/lease-renewal.txt"


def test_an_automatic_move_arrives_live_with_undo(page: Page, household) -> None:
    folder, root = household
    log_in(page)
    page.goto("/inbox/")
    expect(page.get_by_role("article", name="Waiting in the inbox: w2-2024.txt")).to_be_visible()
    w2 = File.objects.get(folder=folder, path="inbox/w2-2024.txt")
    suggestion = suggestion_create(file=w2, target="taxes/2024/", reasoning="A W-2 is a tax form.", confidence=0.97)

    assert suggestion_auto_move(suggestion_id=suggestion.pk) is not None

    moved = page.locator(".move-item").filter(has_text="taxes/2024/w2-2024.txt")
    expect(moved).to_contain_text("automatically")
    moved.get_by_role("button", name="Undo the move of w2-2024.txt").click()
    expect(moved.get_by_role("status")).to_have_text("Moved back to inbox/w2-2024.txt.")
    assert (root / "inbox" / "w2-2024.txt").exists()


@pytest.mark.worker
def test_a_message_to_the_assistant_is_answered_with_its_steps(page: Page, folder, celery_worker_process) -> None:
    log_in(page)
    page.goto("/inbox/")
    composer = page.locator("#inbox-composer")
    expect(composer.get_by_label("Folder")).to_have_value(str(folder.pk))
    box = composer.get_by_label("Message to the inbox assistant")
    box.fill("How much federal income tax was withheld on my 2024 W-2?")
    box.press("Enter")

    answer = page.locator(".message-agent").last
    steps = answer.get_by_role("list", name="Agent steps").get_by_role("listitem")
    expect(steps.first).to_contain_text("search_files", timeout=30_000)
    expect(page.locator("#inbox-run-status")).to_have_text("Answered.", timeout=30_000)
    expect(answer.locator(".answer")).to_contain_text("12,300")
    expect(box).to_be_focused()

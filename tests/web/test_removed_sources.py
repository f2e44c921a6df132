"""A cited file removed since the answer: the answer stays, its citation marked "source removed",
and following it opens a page saying the file is gone (the chat page and the inbox alike)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from apps.chat.inbox_conversations import inbox_conversation_current
from apps.chat.models import Message
from apps.library.models import File, Folder
from apps.library.sync import folder_sync
from tests.support.browser import log_in
from tests.support.chat_library import add_cited_message

pytestmark = pytest.mark.django_db(transaction=True)

REMOVED_PAGE = "This file is no longer here"


def expect_removed_page(page: Page) -> None:
    expect(page.get_by_role("heading", level=1, name=REMOVED_PAGE)).to_be_visible()
    expect(page.get_by_text("This file was removed from the folder")).to_be_visible()


@pytest.mark.worker
def test_a_chat_answers_citation_of_a_file_deleted_since_is_marked_and_opens_a_page_saying_so(
    page: Page, home_notes: Folder, celery_worker_process
) -> None:
    log_in(page)
    page.goto(f"/folders/{home_notes.pk}/")
    page.get_by_label("Your question").fill("When was the boiler serviced?")
    page.get_by_label("Your question").press("Enter")
    expect(page.locator("#run-status")).to_have_text("Answer ready.")
    answer = page.locator(".message-agent").last
    expect(answer.locator(".answer")).to_contain_text("October")
    chip = answer.locator(".source-chip", has_text="boiler.md")
    expect(chip).not_to_have_class(re.compile("source-removed"))

    # Gone at its source: the next sync deletes its row, as the watcher's or beat's would.
    (Path(home_notes.external_id) / "boiler.md").unlink()
    folder_sync(folder_id=home_notes.pk)
    assert not File.objects.filter(folder=home_notes, path="boiler.md").exists()

    page.reload()
    answer = page.locator(".message-agent").last
    expect(answer.locator(".answer")).to_contain_text("October")  # the answer is kept as it was
    chip = answer.get_by_role("link", name=re.compile(r"boiler\.md.* · source removed$"))
    expect(chip).to_have_class(re.compile(r"\bsource-removed\b"))
    expect(answer.get_by_role("link", name=re.compile(r"^Source \d+ \(removed\): boiler\.md")).first).to_be_visible()
    chip.click()
    expect_removed_page(page)


def test_an_inbox_answers_citation_of_a_file_deleted_since_is_marked_and_opens_a_page_saying_so(
    page: Page, folder: Folder
) -> None:
    conversation = inbox_conversation_current(folder=folder)
    Message.objects.create(conversation=conversation, role="user", content={"text": "Where is my W-2?"})
    w2 = File.objects.get(folder=folder, name="W2_Acme_2024.pdf")
    policy = File.objects.get(folder=folder, name="home-policy.pdf")
    add_cited_message(conversation_id=conversation.pk, files=[policy, w2])
    w2.delete()  # what a sync does once the file is gone at its source

    log_in(page)
    page.goto("/inbox/")
    answer = page.locator(".message-agent").last
    kept = answer.locator(".source-chip", has_text="home-policy.pdf")
    expect(kept).to_have_attribute("href", re.compile(rf"^/files/{policy.pk}\?"))
    expect(kept).not_to_have_class(re.compile("source-removed"))
    chip = answer.get_by_role("link", name=re.compile(r"W2_Acme_2024\.pdf · source removed$"))
    expect(chip).to_have_class(re.compile(r"\bsource-removed\b"))
    expect(answer.get_by_role("link", name="Source 2 (removed): W2_Acme_2024.pdf")).to_be_visible()
    chip.click()
    expect_removed_page(page)

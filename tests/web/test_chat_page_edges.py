"""The chat page's rough edges, met by a new user: the folder's other pages one tab away, a skip
link to the question, the Agent-mode choice kept, rating buttons that draw without an emoji font,
citations a finger can hit on a phone, and a member removed while the page is open told so."""

from __future__ import annotations

import itertools
import re

import pytest
from playwright.sync_api import Page, expect

from apps.chat.models import Conversation
from apps.library.members import member_remove
from apps.library.models import FolderMembership
from tests.support.browser import PASSWORD, log_in
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

W2_QUESTION = "How much federal income tax was withheld on the 2024 W-2?"


def test_tabs_skip_link_and_the_agent_mode_kept(page: Page, folder) -> None:
    log_in(page)
    page.goto(f"/folders/{folder.pk}/")
    tabs = page.get_by_role("navigation", name=folder.name)
    expect(tabs.get_by_role("link", name="Chat")).to_have_attribute("aria-current", "page")
    expect(tabs.get_by_role("link", name="Files")).to_have_attribute("href", f"/folders/{folder.pk}/files")

    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the question")
    expect(skip).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_label("Your question")).to_be_focused()

    switch = page.get_by_role("switch", name="Agent mode — slower, more thorough")
    expect(switch).not_to_be_checked()
    switch.check()
    page.reload()
    expect(switch).to_be_checked()
    switch.uncheck()
    page.reload()
    expect(switch).not_to_be_checked()


def test_rating_icons_and_citations_sized_for_a_finger(page: Page, folder, celery_worker_process) -> None:
    log_in(page)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/folders/{folder.pk}/")
    page.get_by_label("Your question").fill(W2_QUESTION)
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#run-status")).to_have_text("Answer ready.")

    answer = page.locator(".message-agent").last
    for name in ("Helpful", "Not helpful"):
        button = answer.get_by_role("button", name=name, exact=True)
        expect(button.locator("svg")).to_have_count(1)
        assert button.inner_text().strip() == ""  # no emoji to fall back to an empty box
    citation = answer.locator(".answer a.cite").first
    box = citation.bounding_box()
    assert box and box["width"] >= 24 and box["height"] >= 24, box


def test_a_member_removed_while_the_page_is_open_is_told_at_once(page: Page, folder, django_user_model) -> None:
    bob = django_user_model.objects.create_user(username="bob", password=PASSWORD)
    membership = FolderMembership.objects.create(folder=folder, user=bob, role="viewer")
    Conversation.objects.create(owner=bob, folder=folder, title="Bob's tax question")
    log_in(page, "bob")
    # The folder's event stream is open once its response has begun.
    with page.expect_response(re.compile(rf"/api/folders/{folder.pk}/events")):
        page.goto(f"/folders/{folder.pk}/")
    sidebar = page.locator("#conversation-list")
    expect(sidebar).to_contain_text("Bob's tax question")
    expect(page.locator("#folder-state")).to_have_text("Ready")

    member_remove(membership=membership, actor=folder.owner)

    expect(page.get_by_role("alert")).to_contain_text("You no longer have access to this folder.")
    expect(page.locator("#folder-state")).to_have_text("No access")
    expect(page.get_by_label("Your question")).to_be_disabled()
    expect(page.get_by_role("button", name="Send")).to_be_disabled()
    expect(sidebar).not_to_contain_text("Bob's tax question")


def test_a_question_refused_for_lost_access_says_so(page: Page, folder, django_user_model) -> None:
    bob = django_user_model.objects.create_user(username="bob", password=PASSWORD)
    membership = FolderMembership.objects.create(folder=folder, user=bob, role="viewer")
    log_in(page, "bob")
    # No live stream to tell the page: it learns from the refused question.
    page.route(f"**/api/folders/{folder.pk}/events*", lambda route: route.abort())
    page.goto(f"/folders/{folder.pk}/")
    expect(page.locator("#folder-state")).to_have_text("Ready")
    membership.delete()

    page.get_by_label("Your question").fill(W2_QUESTION)
    page.get_by_role("button", name="Send").click()

    expect(page.get_by_role("alert")).to_contain_text("You no longer have access to this folder.")
    expect(page.locator("#run-status")).to_have_text("You no longer have access to this folder.")
    expect(page.get_by_label("Your question")).to_be_disabled()


def test_an_expanded_step_keeps_the_heading_order(
    page: Page, folder, worker_model: LLMWireStub, celery_worker_process
) -> None:
    worker_model.reply_tool_calls(StubToolCall(id="call_1", name="search_folder", arguments={"query": "W-2 withheld"}))
    worker_model.reply_text("Federal income tax withheld on the 2024 W-2 was 12,300 dollars [1].")
    log_in(page)
    page.goto(f"/folders/{folder.pk}/")
    page.get_by_role("switch", name="Agent mode — slower, more thorough").check()
    page.get_by_label("Your question").fill(W2_QUESTION)
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#run-status")).to_have_text("Answer ready.")

    step = page.locator(".message-agent").last.locator("details").first
    step.locator("summary").click()
    expect(step.get_by_text("Input", exact=True)).to_be_visible()
    # As axe-core's heading-order rule reads the page: no level skipped on the way down.
    levels = page.evaluate(
        "[...document.querySelectorAll('h1,h2,h3,h4,h5,h6')].filter((h) => h.checkVisibility())"
        ".map((h) => Number(h.tagName[1]))"
    )
    assert all(later <= earlier + 1 for earlier, later in itertools.pairwise(levels)), levels

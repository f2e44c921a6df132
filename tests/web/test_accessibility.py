"""axe-core on every page at 1280 and 390 px, light and dark: no critical and no serious violation.

The pages are shown as a user meets them: the chat page with an answer streamed in agent mode and
a step expanded, the document page at a cited passage, search with results, the inbox with a
suggestion, the Share dialog open, the login page for an invitation, an invitation, a kept
conversation of a removed folder, a removed file, a 404.
"""

from __future__ import annotations

import re
from typing import Literal

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.utils import timezone
from playwright.sync_api import Browser, Page, ViewportSize, expect

from apps.chat.models import Conversation
from apps.library.members import invitation_create
from apps.library.models import File, Folder
from apps.organize.services import suggestion_create
from tests.support.browser import log_in
from tests.support.questions import INSURANCE_QUESTION
from tests.support.servers import RunningServer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

AXE = Axe()
# Violations of these impacts fail; "moderate" and "minor" ones are left to review.
BLOCKING = {"critical", "serious"}
# Two rules axe leaves off by default, on: tap targets of at least 24 px (WCAG 2.2's target-size)
# and a visible label that is part of the accessible name (experimental in axe, seen here before).
OPTIONS = {
    "resultTypes": ["violations"],
    "rules": {"target-size": {"enabled": True}, "label-content-name-mismatch": {"enabled": True}},
}
# Each width in one colour scheme, so that dark mode's contrast is checked too without a third run.
SCREENS: dict[str, tuple[ViewportSize, Literal["light", "dark"]]] = {
    "1280-light": ({"width": 1280, "height": 860}, "light"),
    "390-dark": ({"width": 390, "height": 844}, "dark"),
}


def blocking_violations(page: Page, name: str) -> list[str]:
    """Each serious or critical violation on the page as it is now: id, impact, where, and why."""
    found = AXE.run(page, options=OPTIONS).response["violations"]
    return [
        f"{name}: {violation['id']} ({violation['impact']}) at {node['target']}: {violation['help']}"
        for violation in found
        if violation["impact"] in BLOCKING
        for node in violation["nodes"]
    ]


@pytest.fixture
def invitation_token(other_user) -> str:
    """A link to mallory's folder for anyone holding it, for alice to open."""
    shared = Folder.objects.create(owner=other_user, source="local", external_id="/srv/shared", name="Shared notes")
    return invitation_create(folder=shared, actor=other_user, role="viewer", anyone_with_link=True)[1]


@pytest.fixture
def inbox_suggestion(folder: Folder) -> None:
    suggestion_create(
        file=File.objects.get(folder=folder, path="insurance/home-policy.pdf"),
        target="household/insurance/",
        reasoning="A homeowner's policy belongs with the other insurance papers.",
        confidence=0.82,
        alternatives=[{"folder": "contracts/", "reasoning": "It is a contract."}],
    )


@pytest.mark.parametrize("screen", SCREENS.values(), ids=SCREENS.keys())
def test_every_page_has_no_serious_or_critical_axe_violation(
    browser: Browser,
    web_server: RunningServer,
    folder: Folder,
    user,
    invitation_token: str,
    inbox_suggestion: None,
    celery_worker_process,
    screen: tuple[ViewportSize, Literal["light", "dark"]],
) -> None:
    Conversation.objects.create(owner=user, folder=folder, title="Pancakes for twelve", last_activity_at=timezone.now())
    kept = Conversation.objects.create(owner=user, folder=None, title="Boiler service", last_activity_at=timezone.now())
    viewport, scheme = screen
    context = browser.new_context(base_url=web_server.url, viewport=viewport, color_scheme=scheme, locale="en-US")
    context.set_default_timeout(15_000)
    expect.set_options(timeout=15_000)
    page = context.new_page()
    violations: list[str] = []

    def check(name: str) -> None:
        page.wait_for_load_state("networkidle")
        violations.extend(blocking_violations(page, name))

    try:
        page.goto(f"/invite/{invitation_token}/")
        expect(page.locator("#invitation-notice")).to_be_visible()
        check("login for an invitation")
        log_in(page)

        expect(page.locator(".folder-card").first).to_be_visible()
        check("folders")
        page.locator(".folder-card").first.get_by_role("button", name="Share").click()
        expect(page.locator("#share-dialog")).to_be_visible()
        check("folders, Share dialog open")
        page.keyboard.press("Escape")

        page.goto(f"/folders/{folder.pk}/")
        expect(page.get_by_role("heading", level=1, name=folder.name)).to_be_visible()
        check("chat, empty")
        toggle = page.get_by_role("button", name="Conversations")
        if toggle.is_visible():  # a phone: the conversation list is one toggle away
            toggle.click()
            expect(page.get_by_role("link", name="Pancakes for twelve")).to_be_visible()
            check("chat, conversations open")
            page.keyboard.press("Escape")
        page.get_by_label("Your question").fill(INSURANCE_QUESTION)
        page.get_by_role("switch", name=re.compile("^Agent mode")).check()
        page.get_by_role("button", name="Send").click()
        expect(page.locator("#run-status")).to_have_text("Answer ready.", timeout=30_000)
        answer = page.locator(".message-agent").last
        answer.get_by_role("list", name="Agent steps").get_by_role("listitem").first.locator("summary").click()
        expect(answer.locator(".step-detail").first).to_be_visible()
        check("chat, agent answer with a step expanded")

        citation = answer.locator("a.cite").first
        document_url = citation.get_attribute("href")
        assert document_url
        page.goto(document_url)
        expect(page.locator("mark").first).to_be_visible()
        check("document at a cited chunk")

        # Each page with what shows it filled in, so that axe sees the page a user reads.
        pages = {
            "files": (f"/folders/{folder.pk}/files", page.get_by_text("home-policy.pdf")),
            "search with results": (
                f"/folders/{folder.pk}/search?q=federal+income+tax+withheld",
                page.get_by_role("link", name=re.compile("W2_Acme_2024")),
            ),
            "folder settings": (f"/folders/{folder.pk}/settings", page.locator("main form")),
            "inbox": ("/inbox/", page.locator(".file-card")),
            "organize settings": ("/settings/organize", page.locator("main form")),
            "tokens": ("/settings/tokens", page.locator("main form")),
            "drive setup help": ("/help/drive/", page.get_by_role("heading", level=1)),
            "invitation": (f"/invite/{invitation_token}/", page.get_by_text("Shared notes")),
            "conversation of a removed folder": (f"/conversations/{kept.pk}/", page.get_by_text("Boiler service")),
            "removed file": ("/files/999999", page.get_by_role("heading", level=1)),
            "not found": ("/no/such/page", page.locator("body")),
        }
        for name, (url, shown) in pages.items():
            page.goto(url)
            expect(shown.first).to_be_visible()
            check(name)
    finally:
        context.close()
    assert not violations, "\n".join(violations)

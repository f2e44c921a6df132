"""The screenshot tour (issue 41): every page of the product at 1280x800 and 390x844, in English and
German, over one household's state (tests/support/screenshot_tour.py), saved as
`{SCREENSHOTS}/tour/{language}/{page}-{width}.png`: the README's gallery, refreshed on purpose with
SCREENSHOT_DIR=docs/screenshots (docs/screenshots/README.md).

Each page is checked to be in the browser's language: `<html lang>`, and its heading in words (the
page's h1, or where that is data such as a folder's name, its current tab or section title) is the
English one in English and not the English one in German. The Evaluate pages are still changing,
their strings left out of the catalogs (PENDING in apps/core/management/commands/catalogs.py):
there only `lang` is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import quote_plus

import pytest
from playwright.sync_api import Browser, Page, expect

from apps.chat.models import Conversation
from tests.support.browser import PASSWORD, SCREENSHOTS
from tests.support.screenshot_tour import (
    FOLDER_NAME,
    REMOVED_FOLDER_NAME,
    SEARCHES,
    Tour,
    conversation_answered,
    tour_state,
)
from tests.support.servers import RunningServer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# The English run says en-US outright: the suite reads English whatever the machine's locale.
LOCALES = {"en": "en-US", "de": "de-DE"}
SCREENS = {1280: 800, 390: 844}
TAB = ".folder-tabs [aria-current=page]"
# Chromium's PDF viewer draws after the page has loaded, with nothing to wait for: a picture only.
PDF_DRAWN_MS = 1_500


@dataclass(frozen=True)
class Stop:
    """A page reached by its address: what shows it is ready, and its heading in words."""

    name: str
    path: Callable[[Tour, str], str]  # of the tour and the language
    ready: str  # a selector visible once the page shows its content
    heading: str
    english: str
    translated: bool = True


STOPS = [
    Stop("files", lambda t, _: f"/folders/{t.folder.pk}/files", "#files-rows tr", TAB, "Files"),
    Stop(
        "search",
        lambda t, language: f"/folders/{t.folder.pk}/search?q={quote_plus(SEARCHES[language])}",
        "#search-results > li",
        TAB,
        "Search",
    ),
    Stop("folder-settings", lambda t, _: f"/folders/{t.folder.pk}/settings", "#exclude-patterns", TAB, "Settings"),
    Stop("evaluate", lambda t, _: f"/folders/{t.folder.pk}/evaluate", "#set-list > li", TAB, "Evaluate", False),
    Stop(
        "evaluate-feedback",
        lambda t, _: f"/folders/{t.folder.pk}/evaluate/feedback",
        "#rated-list > li",
        TAB,
        "Evaluate",
        False,
    ),
    Stop("inbox", lambda t, _: "/inbox/", ".file-card", "main h1", "Inbox"),
    Stop("organize-settings", lambda t, _: "/settings/organize", "#auto-suggest", "main h1", "Organize settings"),
    Stop("account", lambda t, _: "/settings/tokens", "#tokens-body tr", "main h1", "Your account"),
    Stop("drive-help", lambda t, _: "/help/drive/", "#help-title", "#help-title", "Google Drive setup"),
    Stop(
        "invitation",
        lambda t, _: f"/invite/{t.invitation_token}/",
        "#invitation-title",
        "#invitation-title",
        "Join a shared folder",
    ),
    Stop(
        "conversation-removed",
        lambda t, _: f"/conversations/{t.kept.pk}/",
        ".message-agent .answer",
        "#folder-removed",
        f"Folder removed: “{REMOVED_FOLDER_NAME}” is no longer connected. "
        "This conversation is kept for you to read; its sources are gone.",
    ),
    Stop(
        "file-removed",
        lambda t, _: f"/files/{t.removed_file_id}",
        "#error-title",
        "#error-title",
        "This file is no longer here",
    ),
    Stop("not-found", lambda t, _: "/no/such/page", "#error-title", "#error-title", "Page not found"),
]


@pytest.fixture
def tour(user, django_user_model, monkeypatch) -> Iterator[Tour]:
    with tour_state(user=user, django_user_model=django_user_model, monkeypatch=monkeypatch) as state:
        yield state


class Visit:
    """One browser context (a language at a width) going round the pages, checking and saving each."""

    def __init__(self, page: Page, *, language: str, width: int) -> None:
        self.page, self.language, self.width = page, language, width
        self.folder = SCREENSHOTS / "tour" / language
        self.folder.mkdir(parents=True, exist_ok=True)

    def check_and_save(self, name: str, *, heading: str, english: str, translated: bool = True) -> None:
        page = self.page
        expect(page.locator("html")).to_have_attribute("lang", self.language)
        said = " ".join((page.locator(heading).first.text_content() or "").split())
        where = f"{name} ({self.language}, {self.width} px)"
        if self.language == "en":
            assert said == english, f"{where}: the heading is {said!r}, not {english!r}"
        elif translated:
            assert said and said != english, f"{where}: the heading {said!r} is not translated"
        # Longer words than English must not push the page sideways (German's top bar once did at 390 px).
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= self.width, f"{where}: the page is {wide} px wide"
        page.screenshot(path=self.folder / f"{name}-{self.width}.png", animations="disabled", caret="hide")

    def stop(self, stop: Stop, tour: Tour) -> None:
        self.page.goto(stop.path(tour, self.language))
        expect(self.page.locator(stop.ready).first).to_be_visible()
        self.check_and_save(stop.name, heading=stop.heading, english=stop.english, translated=stop.translated)


def go_round(visit: Visit, tour: Tour, conversation: Conversation) -> None:
    page = visit.page
    page.goto("/login/")
    visit.check_and_save("login", heading="#login-title", english="Log in")
    page.locator("#id_username").fill("alice")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("#id_password").press("Enter")
    expect(page.locator(".folder-card")).to_have_count(2)  # hers, and the one shared with her
    expect(page.locator(".folder-card .badge").first).to_be_visible()
    visit.check_and_save("folders", heading="main h1", english="Your folders")

    page.locator(".folder-card", has_text=FOLDER_NAME).locator("[data-action=share]").click()
    expect(page.locator("#share-dialog .member-list li").first).to_be_visible()  # bob, an editor
    visit.check_and_save("share", heading="#share-title", english=f"Share {FOLDER_NAME}")
    page.keyboard.press("Escape")

    page.goto(f"/folders/{tour.folder.pk}/?c={conversation.pk}")
    answer = page.locator(".message-agent").last
    expect(answer.locator(".answer a.cite").first).to_be_visible()  # scrolled to the end, as it opens
    visit.check_and_save("chat", heading="#conversations-title", english="Conversations")
    step = answer.locator(".step").first
    step.locator("summary").click()
    expect(step.locator(".step-detail")).to_be_visible()
    step.evaluate("element => element.scrollIntoView({block: 'start'})")
    visit.check_and_save("chat-step", heading="#conversations-title", english="Conversations")

    # The document page as a citation opens it: at the cited passage, highlighted.
    cited = answer.locator(".answer a.cite").first.get_attribute("href")
    assert cited
    page.goto(cited)
    expect(page.locator(".chunk.cited mark").first).to_be_visible()
    if page.locator("#pdf-view").count():
        page.wait_for_timeout(PDF_DRAWN_MS)
    visit.check_and_save("document", heading="#text-title", english="Extracted text")

    for stop in STOPS:
        visit.stop(stop, tour)


# One test over one seeded state: a transactional test's rows go when it ends, so four tests would
# seed four times.
def test_every_page_in_english_and_german_at_1280_and_390_px(
    browser: Browser, web_server: RunningServer, tour: Tour
) -> None:
    for language, locale in LOCALES.items():
        conversation = conversation_answered(tour=tour, language=language)
        for width, height in SCREENS.items():
            context = browser.new_context(
                base_url=web_server.url, viewport={"width": width, "height": height}, locale=locale
            )
            context.set_default_timeout(15_000)
            expect.set_options(timeout=15_000)
            try:
                go_round(Visit(context.new_page(), language=language, width=width), tour, conversation)
            finally:
                context.close()
        conversation.delete()  # each language's chat lists its own question only

"""Every page at 390 px wide (a phone) and by keyboard alone, with screenshots at 1280 and 390 px.

At 390 px nothing may scroll sideways and the header keeps "Log out" in view; the chat page's
conversation list is one toggle away. By keyboard, Tab reaches every visible control of a page in
turn, each showing where focus is.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from apps.chat.models import Conversation
from apps.library.models import File, Folder
from apps.organize.services import suggestion_create
from tests.support.browser import SCREENSHOTS, log_in
from tests.support.servers import RunningServer

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 860}
# A focused control shows it: its own outline or shadow, or (a switch's input, drawn over by its
# track) the next element's.
FOCUS_SHOWN = """(element) => [element, element.nextElementSibling].filter(Boolean).some((shown) => {
    const style = getComputedStyle(shown);
    const outline = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0;
    return outline || (style.boxShadow && style.boxShadow !== "none");
})"""
# Visible controls a keyboard must reach; of a radio group only the checked one is a Tab stop.
TAB_STOPS = """() => [...document.querySelectorAll(
    'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])'
)].filter((element) => {
    if (element.disabled || element.closest("[hidden], template")) return false;
    if (element.type === "radio" && !element.checked && element.name) return false;
    if (element.type === "hidden") return false;
    const box = element.getBoundingClientRect();
    const style = getComputedStyle(element);
    return box.width > 0 && box.height > 0 && style.visibility !== "hidden";
}).map((element, index) => (element.dataset.tabStop = String(index)))"""


@pytest.fixture
def phone(browser: Browser, web_server: RunningServer) -> Iterator[Page]:
    context = browser.new_context(
        base_url=web_server.url, viewport=PHONE, is_mobile=True, has_touch=True, locale="en-US"
    )
    context.set_default_timeout(15_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def library(folder: Folder, user) -> Folder:
    """The web suite's folder with two conversations and a pending suggestion with a long path."""
    for title in ["When does the home insurance renew?", "Pancake recipe for a crowd of twelve people"]:
        Conversation.objects.create(owner=user, folder=folder, title=title, last_activity_at=timezone.now())
    policy = File.objects.get(folder=folder, path="insurance/home-policy.pdf")
    suggestion_create(
        file=policy,
        target="household/insurance/northwind-mutual/policies-and-renewals-2024/",
        reasoning="A homeowner's policy belongs with the other Northwind Mutual papers.",
        confidence=0.82,
        alternatives=[{"folder": "contracts/", "reasoning": "It is a contract."}],
    )
    return folder


def pages(folder: Folder) -> dict[str, str]:
    return {
        "folders": "/",
        "chat": f"/folders/{folder.pk}/",
        "inbox": "/inbox/",
        "drive-setup": "/help/drive/",
        "not-found": "/no/such/page",
    }


# The elements sticking out on the right, innermost first: what a failure names.
OVERFLOWING = """(limit) => [...document.querySelectorAll("body *")]
    .filter((element) => element.getBoundingClientRect().right > limit + 0.5)
    .filter((element) => ![...element.children].some((child) => child.getBoundingClientRect().right > limit + 0.5))
    .map((element) => `${element.tagName}.${element.className} (${element.getBoundingClientRect().right} px)`)
    .slice(0, 8)"""


def assert_fits(page: Page, name: str) -> None:
    width = page.evaluate("() => document.scrollingElement.scrollWidth")
    overflowing = page.evaluate(OVERFLOWING, PHONE["width"]) if width > PHONE["width"] else []
    assert width <= PHONE["width"], f"{name} is {width} px wide at {PHONE['width']} px: {overflowing}"


def settle(page: Page, name: str) -> None:
    """Wait for what a page's script fills in, so the measure and the picture are of the full page."""
    if name == "folders":
        expect(page.locator(".folder-card").first).to_be_visible()
    elif name == "inbox":
        expect(page.locator(".file-card").first).to_be_visible()
    page.wait_for_load_state("networkidle")


def test_every_page_fits_390_px_with_log_out_in_view_and_screenshots_at_both_widths(
    phone: Page, page: Page, library: Folder
) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    phone.goto("/login/")
    assert_fits(phone, "login")
    phone.screenshot(path=SCREENSHOTS / "login-390.png")
    log_in(phone)
    log_in(page)
    for name, url in pages(library).items():
        phone.goto(url)
        settle(phone, name)
        assert_fits(phone, name)
        expect(phone.get_by_role("button", name="Log out")).to_be_in_viewport(ratio=1)
        phone.screenshot(path=SCREENSHOTS / f"{name}-390.png", full_page=True)
        page.goto(url)
        settle(page, name)
        page.screenshot(path=SCREENSHOTS / f"{name}-1280.png")


def test_chat_at_390_px_opens_the_conversation_list_from_a_toggle(phone: Page, library: Folder) -> None:
    log_in(phone)
    phone.goto(f"/folders/{library.pk}/")
    conversations = phone.get_by_role("list", name="Conversations")
    toggle = phone.get_by_role("button", name="Conversations")
    expect(conversations).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")

    toggle.focus()
    phone.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    link = conversations.get_by_role("link", name="When does the home insurance renew?")
    expect(link).to_be_in_viewport()
    assert_fits(phone, "chat with its conversations open")
    phone.screenshot(path=SCREENSHOTS / "chat-conversations-390.png")
    phone.keyboard.press("Escape")
    expect(conversations).to_be_hidden()
    expect(toggle).to_be_focused()
    toggle.click()
    link.click()
    expect(phone).to_have_url(f"{phone.url.split('?')[0]}?c={Conversation.objects.order_by('pk').first().pk}")


def test_the_desktop_chat_page_shows_its_conversations_without_the_toggle(page: Page, library: Folder) -> None:
    log_in(page)
    page.goto(f"/folders/{library.pk}/")
    expect(page.get_by_role("link", name="When does the home insurance renew?")).to_be_visible()
    expect(page.get_by_role("button", name="Conversations")).to_be_hidden()


def assert_tab_reaches_every_control(page: Page, name: str) -> None:
    """Tab from the top of the page round it once: every visible control in turn, focus shown on each."""
    stops = set(page.evaluate(TAB_STOPS))
    assert len(stops) >= 3, f"{name}: {stops}"  # at least the skip link, the brand and one more
    reached: list[str] = []
    outer = "(element) => element.outerHTML.slice(0, 120)"
    for _ in range(len(stops) + 5):
        page.keyboard.press("Tab")
        focused = page.evaluate_handle("() => document.activeElement")
        stop = page.evaluate("(element) => element.dataset.tabStop ?? element.tagName", focused)
        if stop in reached:
            break  # round the page once
        reached.append(stop)
        if stop in stops:
            label = page.evaluate(outer, focused)
            assert page.evaluate(FOCUS_SHOWN, focused), f"{name}: no visible focus on {label}"
    missing = sorted(stops - set(reached))
    described = [page.locator(f'[data-tab-stop="{stop}"]').evaluate(outer) for stop in missing]
    assert not missing, f"{name}: Tab never reaches {described}"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_tab_reaches_every_control_of_every_page_and_shows_focus(
    browser: Browser, web_server: RunningServer, library: Folder, viewport: dict[str, int]
) -> None:
    context = browser.new_context(base_url=web_server.url, viewport=viewport, locale="en-US")
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        page.goto("/login/")
        assert_tab_reaches_every_control(page, "login")
        log_in(page)
        for name, url in pages(library).items():
            page.goto(url)
            settle(page, name)
            assert_tab_reaches_every_control(page, name)
    finally:
        context.close()

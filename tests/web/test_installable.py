"""Installable and easy on the eyes: a web app manifest whose icons load without a session, dark
mode from the system's `prefers-color-scheme` with readable text, and icons drawn as SVG, not
emoji glyphs that a system without an emoji font shows as empty boxes."""

from __future__ import annotations

import io
import json
import re

import pytest
from PIL import Image
from playwright.sync_api import Page, expect

from tests.support.browser import SCREENSHOTS, log_in

pytestmark = [pytest.mark.django_db(transaction=True)]

# Emoji and the symbol blocks used as pictures (arrows, geometric shapes, dingbats such as ✕ ▶ ✓).
ICON_GLYPHS = re.compile("[\u2190-\u21ff\u2300-\u23ff\u25a0-\u25ff\u2600-\u27bf\u2b00-\u2bff\U0001f300-\U0001faff]")
CONTROLS = "button, a, summary, label, [role=button], [role=switch], [role=tab]"
COLOURS = """() => {
  const style = getComputedStyle(document.body);
  const muted = document.querySelector(".muted");
  return {
    background: style.backgroundColor,
    text: style.color,
    muted: muted ? getComputedStyle(muted).color : style.color,
  };
}"""


def test_the_manifest_is_linked_and_its_icons_load_without_a_session(page: Page) -> None:
    page.goto("/login/")
    href = page.locator('link[rel="manifest"]').get_attribute("href")
    assert href == "/manifest.webmanifest"
    expect(page.locator('meta[name="theme-color"]').first).to_have_attribute("content", re.compile(r"^#[0-9a-f]{6}$"))

    # The page's context has no cookies: a browser fetches the manifest without credentials.
    response = page.request.get(href)
    assert response.status == 200
    assert response.headers["content-type"].startswith("application/manifest+json")
    manifest = json.loads(response.text())
    assert manifest["name"] == "Folder Chat"
    assert manifest["short_name"]
    assert manifest["start_url"] == "/"
    assert manifest["display"] == "standalone"
    assert re.fullmatch(r"#[0-9a-f]{6}", manifest["theme_color"])
    assert re.fullmatch(r"#[0-9a-f]{6}", manifest["background_color"])

    by_type = {icon["type"]: icon for icon in manifest["icons"]}
    assert by_type["image/svg+xml"]["sizes"] == "any"
    png_sizes = set()
    for icon in manifest["icons"]:
        loaded = page.request.get(icon["src"])
        assert loaded.status == 200, icon
        assert loaded.headers["content-type"].split(";")[0] == icon["type"], icon
        if icon["type"] == "image/png":
            width, height = Image.open(io.BytesIO(loaded.body())).size
            assert f"{width}x{height}" == icon["sizes"], icon
            png_sizes.add(width)
        else:
            assert loaded.text().lstrip().startswith("<svg"), icon
    # What Chromium asks of an installable app: a 192 px and a 512 px icon.
    assert {192, 512} <= png_sizes


def test_dark_mode_follows_the_system_with_readable_text(page: Page, folder, celery_worker_process) -> None:
    log_in(page)
    light = page.evaluate(COLOURS)
    assert luminance(light["background"]) > 0.8, light

    page.emulate_media(color_scheme="dark")
    page.goto("/")
    expect(page.get_by_role("link", name=folder.name, exact=True)).to_be_visible()
    dark = page.evaluate(COLOURS)
    assert luminance(dark["background"]) < 0.05, dark
    assert luminance(dark["text"]) > 0.6, dark
    assert contrast(dark["text"], dark["background"]) >= 4.5, dark
    assert contrast(dark["muted"], dark["background"]) >= 4.5, dark
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "folders-dark.png", full_page=True)

    page.goto(f"/folders/{folder.pk}/")
    page.get_by_label("Your question").fill("How much federal income tax was withheld on the 2024 W-2?")
    page.get_by_label("Your question").press("Enter")
    expect(page.locator("#run-status")).to_have_text("Answer ready.")
    answer = page.locator(".message-agent").last
    expect(answer.locator(".answer")).to_contain_text("12,300")
    # The answer's text on its own bubble, and a question's on the accent fill, stay readable too.
    for bubble in (answer.locator(".bubble"), page.locator(".message-user .bubble").last):
        colours = bubble.evaluate("(el) => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]")
        assert contrast(*colours) >= 4.5, colours
    page.screenshot(path=SCREENSHOTS / "chat-dark.png", full_page=True)


def test_no_emoji_glyph_is_left_in_the_controls_of_the_main_pages(page: Page, folder) -> None:
    log_in(page)
    pages = [
        "/",
        f"/folders/{folder.pk}/",
        f"/folders/{folder.pk}/files",
        f"/folders/{folder.pk}/search",
        f"/folders/{folder.pk}/settings",
        "/inbox/",
        "/settings/organize",
        "/settings/tokens",
        f"/files/{folder.files.order_by('pk').first().pk}",
    ]
    for url in pages:
        page.goto(url)
        page.wait_for_load_state("networkidle")
        texts = page.locator(CONTROLS).evaluate_all("(els) => els.map((el) => el.innerText || el.textContent)")
        assert texts, url
        glyphs = [text for text in texts if ICON_GLYPHS.search(text)]
        assert not glyphs, (url, glyphs)
    # The back link and the sharing dialog's close button are icons now, still named in words.
    page.goto(f"/folders/{folder.pk}/")
    expect(page.get_by_role("link", name="All folders", exact=True).locator("svg[aria-hidden=true]")).to_have_count(1)
    page.goto("/")
    page.get_by_role("button", name="Share", exact=True).first.click()
    close = page.get_by_role("button", name="Close sharing")
    expect(close).to_be_visible()
    expect(close.locator("svg[aria-hidden=true]")).to_have_count(1)
    assert close.inner_text().strip() == ""


def luminance(css_colour: str) -> float:
    """WCAG relative luminance of a computed `rgb(r, g, b)` colour."""
    red, green, blue = (float(part) for part in re.findall(r"\d+(?:\.\d+)?", css_colour)[:3])

    def channel(value: float) -> float:
        value_01 = value / 255
        return value_01 / 12.92 if value_01 <= 0.03928 else ((value_01 + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast(first: str, second: str) -> float:
    lighter, darker = sorted((luminance(first), luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)

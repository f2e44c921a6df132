"""Browsing, searching and managing a folder in a real browser: search opens the document page,
the files page filters and sorts, a folder is renamed, synced by the worker and removed (its files
on disk untouched), a bad exclude line shows the API's message, organize settings save; every
page by keyboard and at 390 px."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from apps.chat.models import Conversation
from apps.library.exclusions import ExcludePatternError, exclude_patterns_clean
from apps.library.models import Chunk, File, Folder, SyncLog
from apps.organize.models import OrganizationSettings
from tests.support.browser import SCREENSHOTS, log_in
from tests.support.servers import BASE_DIR
from tests.web.conftest import add_file

pytestmark = pytest.mark.django_db(transaction=True)

MARKUP = '<img src="x" onerror="document.title=\'pwned\'"> Box 2 federal tax withheld <b>again</b>'


def fits(page: Page, width: int = 390) -> bool:
    """Nothing of the page's content reaches past `width` (the shared header is base.html's)."""
    return page.evaluate("document.getElementById('main').scrollWidth") <= width


def test_search_marks_the_query_words_and_opens_the_document_page(page: Page, folder: Folder) -> None:
    w2 = File.objects.get(folder=folder, path="taxes/2024/W2_Acme_2024.pdf")
    withheld = Chunk.objects.get(file=w2, text__contains="withheld")
    log_in(page)
    page.goto(f"/folders/{folder.pk}/search")

    box = page.get_by_role("searchbox", name="Search the files of Household documents")
    expect(box).to_be_focused()
    box.fill("federal tax withheld")
    page.keyboard.press("Enter")

    results = page.get_by_role("list", name="Results").get_by_role("listitem")
    expect(page.get_by_role("status").filter(has_text="passages in")).to_be_visible()
    first = results.first
    expect(first).to_contain_text("W2_Acme_2024.pdf")
    expect(first.locator("mark").first).to_be_visible()
    assert {text.lower() for text in first.locator("mark").all_inner_texts()} == {"federal", "tax", "withheld"}
    link = first.get_by_role("link")
    expect(link).to_have_attribute("href", f"/files/{w2.pk}?chunk={withheld.pk}")

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "search.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    expect(first).to_be_visible()
    assert fits(page)
    page.screenshot(path=SCREENSHOTS / "search-mobile.png", full_page=True)

    # Words found nowhere: said so, and what follows is named the closest in meaning.
    box.fill("xyzzyqwerty")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status").filter(has_text="xyzzyqwerty")).to_have_text(
        re.compile(r"^No passage contains “xyzzyqwerty”\. The \d+ closest in meaning:$")
    )
    expect(results.first.locator("mark")).to_have_count(0)
    box.fill("federal tax withheld")

    # Filters narrow the search, and the page's URL keeps them.
    page.get_by_text("Filters").click()
    page.get_by_label("Path starts with").fill("insurance/")
    page.get_by_role("button", name="Search").click()
    expect(results.first).to_contain_text("home-policy.pdf")
    expect(results.filter(has_text="W2_Acme_2024.pdf")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"path=insurance%2F"))

    # Markup in a passage is text: shown as written, never run or rendered.
    add_file(folder=folder, path="notes/markup.html", chunks=[(MARKUP, {})])
    page.get_by_label("Path starts with").fill("notes/")
    page.get_by_label("Keyword").check()  # a change of mode searches again
    markup = results.filter(has_text="markup.html")
    expect(markup.locator(".search-hit-text")).to_contain_text('<img src="x"')
    expect(markup.locator("img")).to_have_count(0)
    expect(markup.locator("mark")).to_have_text(["federal", "tax", "withheld"])
    assert page.title() != "pwned"

    # A search from its URL (the W-2's own words: markup.html now holds "federal tax withheld" as written).
    page.goto(f"/folders/{folder.pk}/search?q=federal+income+tax+withheld")
    link = results.first.get_by_role("link")
    link.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/files/{w2.pk}\?chunk={withheld.pk}$"))


def test_the_files_page_shows_reasons_filters_sorts_and_pages(page: Page, folder: Folder) -> None:
    failed = File.objects.get(folder=folder, path="recipes/pancakes.md")
    File.objects.filter(pk=failed.pk).update(status="failed", error="ValueError: the parser gave up", size=9_999_999)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    log_in(page)
    page.goto(f"/folders/{folder.pk}/files")
    rows = page.locator("#files-rows tr")
    expect(rows).to_have_count(4)
    expect(page.get_by_role("status").filter(has_text="Showing")).to_have_text("Showing 1\u20134 of 4 files")
    expect(rows.filter(has_text="pancakes.md")).to_contain_text("ValueError: the parser gave up")

    page.get_by_label("Status").select_option("failed")
    expect(rows).to_have_count(1)
    page.get_by_label("Status").select_option("")
    page.get_by_label("Sort by").select_option("-size")
    expect(rows.first).to_contain_text("pancakes.md")
    expect(rows.first).to_contain_text("9.5 MB")
    page.get_by_label("Name contains").fill("POLICY")
    page.keyboard.press("Enter")
    expect(rows).to_have_count(1)
    expect(rows.first.get_by_role("link")).to_have_attribute("href", re.compile(r"^/files/\d+$"))
    # The filters are in the URL: a reload shows the same list.
    page.reload()
    expect(page.get_by_label("Name contains")).to_have_value("POLICY")
    expect(rows).to_have_count(1)

    page.screenshot(path=SCREENSHOTS / "folder-files.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    expect(rows.first).to_be_visible()
    assert fits(page)
    page.screenshot(path=SCREENSHOTS / "folder-files-mobile.png", full_page=True)


@pytest.mark.worker
def test_rename_sync_and_remove_a_folder_by_keyboard_leaves_its_files_on_disk(
    page: Page, home_notes: Folder, celery_worker_process
) -> None:
    root = home_notes.external_id
    before = {name: (BASE_DIR / root / name).read_text() for name in ("boiler.md", "car.txt")}
    conversation = Conversation.objects.create(owner=home_notes.owner, folder=home_notes, title="Boiler")
    log_in(page)
    page.goto(f"/folders/{home_notes.pk}/settings")

    name = page.get_by_label("Folder name")
    name.focus()
    name.fill("Household notes")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status").filter(has_text="Renamed")).to_have_text("Renamed to Household notes.")
    expect(page.get_by_role("heading", level=1)).to_have_text("Household notes")

    home_notes.refresh_from_db()
    synced_before = home_notes.last_synced_at
    page.get_by_role("button", name="Sync now").click()
    expect(page.get_by_role("status").filter(has_text="Sync queued")).to_be_visible()
    for _ in range(120):  # the worker records the sync it ran
        if SyncLog.objects.filter(folder=home_notes).exists():
            break
        page.wait_for_timeout(500)
    assert SyncLog.objects.filter(folder=home_notes).exists()
    home_notes.refresh_from_db()
    assert home_notes.last_synced_at != synced_before
    # The page follows the folder's events: the sync's time shows without a reload.
    synced = home_notes.last_synced_at.isoformat().replace("+00:00", "Z")
    expect(page.locator("#last-sync")).to_have_attribute("title", synced)
    expect(page.locator("#folder-state")).to_have_text("Ready")

    page.goto("/")
    card = page.locator(".folder-card").filter(has=page.get_by_role("link", name="Household notes", exact=True))
    expect(card).to_be_visible()
    card.get_by_role("link", name="Settings of Household notes").click()
    # The button is server-rendered; its listener comes with the page's script.
    expect(page).to_have_url(re.compile(r"/folders/\d+/settings$"))
    page.wait_for_load_state()

    remove = page.get_by_role("button", name="Remove folder…")
    remove.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Remove Household notes?")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Escape")  # nothing happens on the way out
    expect(dialog).to_be_hidden()
    assert Folder.objects.filter(pk=home_notes.pk).exists()

    remove.focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    expect(dialog.get_by_role("button", name="Remove")).to_be_focused()
    page.keyboard.press("Enter")

    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.get_by_role("heading", name="Your folders")).to_be_visible()
    expect(page.locator("#folders-status")).to_have_text("No folders yet. Add one to start asking questions.")
    expect(page.get_by_role("link", name="Household notes", exact=True)).to_have_count(0)
    assert not Folder.objects.filter(pk=home_notes.pk).exists()
    assert not Chunk.objects.filter(folder_id=home_notes.pk).exists()
    conversation.refresh_from_db()  # the owner's: kept to read, its folder's name remembered
    assert (conversation.folder_id, conversation.folder_name) == (None, "Household notes")
    kept = page.get_by_role("region", name="Conversations of removed folders")
    expect(kept).to_contain_text("Household notes, read-only")
    kept.get_by_role("link", name="Boiler").click()
    expect(page.locator("#folder-removed")).to_contain_text("Folder removed: “Household notes”")
    assert {name: (BASE_DIR / root / name).read_text() for name in before} == before
    # The removed folder's pages are gone too, not broken.
    assert page.goto(f"/folders/{home_notes.pk}/").status == 404
    assert page.goto(f"/folders/{home_notes.pk}/search").status == 404


def test_a_bad_exclude_line_shows_the_apis_message_and_a_good_one_saves(page: Page, folder: Folder) -> None:
    bad = "drafts/\n[z-a].txt"
    with pytest.raises(ExcludePatternError) as refused:
        exclude_patterns_clean(text=bad)
    log_in(page)
    page.goto(f"/folders/{folder.pk}/settings")
    patterns = page.get_by_label("Never index paths matching")
    patterns.fill(bad)
    page.get_by_role("button", name="Save patterns").click()
    alert = page.locator("#exclude-error")
    expect(alert).to_have_text(f"exclude patterns: {refused.value}")
    expect(alert).to_have_attribute("role", "alert")
    expect(patterns).to_be_focused()
    folder.refresh_from_db()
    assert "drafts/" not in folder.exclude_patterns

    patterns.fill("drafts/\n*.tmp")
    page.get_by_role("button", name="Save patterns").click()
    expect(page.get_by_role("status").filter(has_text="Saved")).to_have_text("Saved. A sync applies them now.")
    expect(alert).to_be_empty()
    folder.refresh_from_db()
    assert folder.exclude_patterns == "drafts/\n*.tmp"

    interval = page.get_by_label("Check for changes every (minutes)")
    interval.fill("0")
    page.get_by_role("button", name="Save interval").click()
    expect(page.locator("#interval-error")).to_have_text("Choose a whole number of minutes from 1 to 10080.")
    interval.fill("15")
    page.get_by_role("button", name="Save interval").click()
    expect(page.locator("#interval-done")).to_have_text("Saved: checked every 15 minutes.")
    page.screenshot(path=SCREENSHOTS / "folder-settings.png", full_page=True)
    folder.refresh_from_db()
    assert folder.sync_interval_seconds == 900


def test_organize_settings_save_and_show_the_apis_refusals(page: Page, user) -> None:
    log_in(page)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Organize").click()
    expect(page.get_by_role("heading", level=1, name="Organize settings")).to_be_visible()
    expect(page.get_by_label("Suggest a folder for each new inbox file")).to_be_checked()

    page.get_by_label("Move files without asking when very confident").check()
    page.get_by_label("Move only when at least this confident (0 to 1)").fill("1.5")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#organize-error")).to_contain_text("auto move threshold")
    assert not OrganizationSettings.objects.filter(owner=user).exists()

    page.get_by_label("Move only when at least this confident (0 to 1)").fill("0.9")
    page.get_by_label("Only into these folders").fill("taxes/\n\nwork/reports")
    page.get_by_label("Never into these folders").fill("private/")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#organize-done")).to_have_text("Saved.")
    saved = OrganizationSettings.objects.get(owner=user)
    assert (saved.auto_move, saved.auto_move_threshold) == (True, 0.9)
    assert (saved.include_folders, saved.exclude_folders) == (["taxes/", "work/reports/"], ["private/"])

    page.reload()
    expect(page.get_by_label("Only into these folders")).to_have_value("taxes/\nwork/reports/")
    expect(page.get_by_label("Move files without asking when very confident")).to_be_checked()
    page.set_viewport_size({"width": 390, "height": 844})
    assert fits(page)
    page.screenshot(path=SCREENSHOTS / "organize-settings-mobile.png", full_page=True)


@pytest.mark.parametrize("section", ["files", "search", "settings"])
def test_each_folder_page_fits_390_px_and_shows_keyboard_focus(page: Page, folder: Folder, section: str) -> None:
    log_in(page)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/folders/{folder.pk}/{section}")
    tabs = page.get_by_role("navigation", name="Household documents")
    expect(tabs).to_be_visible()
    assert fits(page)
    tab = tabs.get_by_role("link", name=section.capitalize(), exact=True)
    expect(tab).to_have_attribute("aria-current", "page")
    tab.focus()
    # A focused control is visibly marked (an outline or the focus ring's shadow).
    style = tab.evaluate("e => getComputedStyle(e).outlineStyle + ' ' + getComputedStyle(e).boxShadow")
    assert style.split()[0] != "none" or "rgb" in style

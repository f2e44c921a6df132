"""Logging in, the folder list, adding a folder and syncing it, in a real browser."""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from apps.library.models import SyncLog
from tests.support.browser import SCREENSHOTS, log_in
from tests.support.servers import BASE_DIR

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def local_dir() -> Iterator[Path]:
    # Under var/folders: one of the roots local folders may be connected from (LOCAL_FOLDER_ROOTS).
    path = BASE_DIR / "var" / "folders" / f"web-test-{uuid.uuid4().hex[:8]}"
    path.mkdir(parents=True)
    (path / "notes.md").write_text("# Notes\n\nThe boiler was serviced in October by Heatwise.\n")
    (path / "todo.txt").write_text("Renew the car insurance before the end of May.\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def folder_card(page: Page, name: str):
    return page.locator(".folder-card").filter(has=page.get_by_role("link", name=name, exact=True))


def test_login_then_folders_with_status_counts_and_last_sync_result(page: Page, folder) -> None:
    SyncLog.objects.create(folder=folder, mode="full", added=2, modified=1)

    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login/\?next=/$"))
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("wrong-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("enter a correct username and password")

    log_in(page)
    card = folder_card(page, "Household documents")
    expect(card.locator(".badge")).to_have_text("Ready")
    expect(card).to_contain_text("4 of 4 files indexed")
    expect(card).to_contain_text("Last sync: just now")
    expect(card.get_by_role("status")).to_have_text("Updated: 2 new, 1 changed")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "folders.png")

    card.get_by_role("link", name="Chat with Household documents").click()
    expect(page.get_by_role("heading", level=1, name="Household documents")).to_be_visible()

    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(re.compile(r"/login/$"))


def test_log_out_is_not_overtaken_by_an_api_call_answered_401(page: Page, folder) -> None:
    """A page's API call answered 401 while logging out is under way (the session is already gone)
    must not replace that navigation with a trip to the login page and back here."""
    log_in(page)
    expect(folder_card(page, "Household documents").locator(".badge")).to_have_text("Ready")
    page.route("**/api/folders/", lambda route: route.fulfill(status=401, json={"detail": "Not logged in."}))
    page.evaluate(
        """() => import("/static/web/js/api.js").then(({ api }) => {
            document.querySelector("form.account").requestSubmit();
            api("/api/folders/").catch(() => null);
        })"""
    )
    expect(page).to_have_url(re.compile(r"/login/$"))
    expect(page.get_by_role("heading", level=1, name="Log in")).to_be_visible()


@pytest.mark.worker
def test_add_folder_shows_api_errors_then_indexes_and_syncs(page: Page, user, local_dir, celery_worker_process) -> None:
    log_in(page)
    expect(page.get_by_role("status").first).to_have_text("No folders yet. Add one to start asking questions.")
    form = page.locator("#add-folder-form")

    form.get_by_role("button", name="Add folder").click()
    expect(page.get_by_role("alert")).to_have_text("path: Required for a local folder.")

    form.get_by_label("Directory path").fill("/etc")
    form.get_by_role("button", name="Add folder").click()
    expect(page.get_by_role("alert")).to_have_text("The path is outside the allowed local roots.")

    form.get_by_label("Google Drive").check()
    expect(form.get_by_label("Directory path")).to_be_hidden()
    form.get_by_label("Local directory").check()
    form.get_by_label("Directory path").fill(str(local_dir))
    form.get_by_label("Name").fill("Home notes")
    form.get_by_role("button", name="Add folder").click()
    expect(page.locator("#add-folder-error")).to_be_empty()
    expect(form.get_by_label("Directory path")).to_have_value("")

    card = folder_card(page, "Home notes")
    expect(card.locator(".badge")).to_have_text("Ready", timeout=60_000)
    expect(card).to_contain_text("2 of 2 files indexed")

    (local_dir / "receipt.txt").write_text("Receipt: new dishwasher from Brightline, 649 dollars.\n")
    (local_dir / "notes.md").write_text("# Notes\n\nThe boiler was serviced in November by Heatwise.\n")
    card.get_by_role("button", name="Sync now: Home notes").click()
    expect(card.get_by_role("status")).to_have_text("Updated: 1 new, 1 changed", timeout=60_000)
    expect(card).to_contain_text("3 of 3 files indexed", timeout=60_000)
    expect(card.get_by_role("button", name="Sync now: Home notes")).to_be_enabled()

    # A refused sync reads as a failure, not in the success colour of a sync's summary.
    page.route(
        re.compile(r"/api/folders/\d+/sync$"), lambda route: route.fulfill(status=503, json={"detail": "Try later."})
    )
    card.get_by_role("button", name="Sync now: Home notes").click()
    result = card.get_by_role("status")
    expect(result).to_have_text("Sync failed: Try later.")
    expect(result).to_have_class(re.compile(r"\bfailed\b"))
    danger = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--danger').trim()")
    colour = result.evaluate("(element) => getComputedStyle(element).color")
    swatch = page.evaluate(
        "(value) => { const probe = document.createElement('span'); probe.style.color = value;"
        " document.body.append(probe); const colour = getComputedStyle(probe).color; probe.remove(); return colour; }",
        danger,
    )
    assert colour == swatch

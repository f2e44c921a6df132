"""Connecting Google Drive in the page and picking a folder from a shared drive, against the emulator.

The consent page and the token exchange are the emulator's (at the wire); the picked folder is
indexed by a real worker, and its card fills from the folder's event stream.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from apps.connectors.models import DriveCredential
from apps.library.models import Folder
from emulators.drive.server import DriveEmulator
from tests.support.browser import SCREENSHOTS, log_in

pytestmark = pytest.mark.django_db(transaction=True)


def folder_card(page: Page, name: str):
    return page.locator(".folder-card").filter(has=page.get_by_role("link", name=name, exact=True))


@pytest.fixture
def shared_drive(drive_emulator: DriveEmulator) -> str:
    state = drive_emulator.state
    team = state.add_shared_drive("Team")
    contracts = state.add_folder("Contracts", parent_id=team)
    for number in range(1, 25):
        text = f"Contract {number}: the supplier delivers {number * 10} crates every month."
        state.add_file(f"contract-{number}.txt", text.encode(), parent_id=contracts)
    state.add_folder("Archive", parent_id=team)
    state.add_folder("Personal notes")  # in My Drive
    return team


@pytest.mark.worker
def test_connect_drive_then_pick_a_shared_drive_folder_and_watch_it_index(
    drive_page: Page, user, shared_drive, drive_worker
) -> None:
    page = drive_page
    log_in(page)
    form = page.locator("#add-folder-form")
    form.get_by_label("Google Drive").check()
    expect(page.locator("#drive-status")).to_have_text("Connect your Google Drive to pick a folder from it.")

    page.get_by_role("button", name="Connect Google Drive").click()  # the emulator consents at once
    expect(page.get_by_role("status").filter(has_text="Google Drive is connected")).to_be_visible()
    expect(page).to_have_url(page.url.split("?")[0])  # the one-time callback is not left in history
    assert DriveCredential.objects.get(owner=user).refresh_token

    picker = page.locator("#drive-picker")
    expect(picker.get_by_role("button", name="Open Personal notes")).to_be_visible()
    picker.get_by_role("button", name="Open shared drive Team").click()
    expect(picker.get_by_role("navigation", name="Drive location")).to_have_text("Team")
    expect(picker.get_by_role("button", name="Open Archive")).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "drive-picker.png")
    picker.get_by_label("Search Drive folders").fill("contr")
    picker.get_by_label("Search Drive folders").press("Enter")
    expect(page.locator("#drive-status")).to_have_text("1 folder named like “contr”.")
    picker.get_by_role("button", name="Open Contracts").click()
    crumbs = picker.get_by_role("navigation", name="Drive location")
    expect(crumbs.get_by_role("listitem")).to_have_text(["Team", "Contracts"])
    expect(crumbs.get_by_role("button", name="Team")).to_be_visible()  # back up one level

    picker.get_by_role("button", name="Add “Contracts”").click()
    card = folder_card(page, "Contracts")
    expect(card).to_contain_text(" of 24 files indexed")  # the listing's `scan` event arrived
    page.screenshot(path=SCREENSHOTS / "folders-indexing.png")
    expect(card.locator(".badge")).to_have_text("Ready", timeout=60_000)
    expect(card).to_contain_text("24 of 24 files indexed")
    progress = card.get_by_role("progressbar", name="Files of Contracts done")
    expect(progress).to_have_js_property("value", 24)
    expect(progress).to_have_js_property("max", 24)
    expect(card).to_contain_text("Last sync: just now")
    folder = Folder.objects.get(owner=user, name="Contracts")
    assert folder.source == "drive" and folder.files_indexed == 24


def test_a_forged_callback_gets_the_folders_page_saying_so_and_stores_nothing(drive_page: Page, user) -> None:
    page = drive_page
    log_in(page)
    page.goto("/api/drive/callback?state=forged-state&code=emu-code-x")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("not valid: its state is unknown, forged or already used")
    expect(page.get_by_role("heading", name="Your folders")).to_be_visible()
    expect(page.get_by_label("Google Drive")).to_be_checked()
    assert not DriveCredential.objects.exists()


def test_a_folder_whose_access_was_revoked_offers_reconnect_which_resumes_it(drive_page: Page, user) -> None:
    folder = Folder.objects.create(
        owner=user,
        source="drive",
        external_id="1Revoked",
        name="Old contracts",
        status="needs_reauth",
        last_error="Google Drive access was revoked or has expired; reconnect Google Drive.",
    )
    page = drive_page
    log_in(page)
    card = folder_card(page, "Old contracts")
    expect(card.locator(".badge")).to_have_text("Needs reconnecting")
    expect(card).to_contain_text("access was revoked")

    card.get_by_role("button", name="Reconnect Google Drive for Old contracts").click()

    expect(page.get_by_role("status").filter(has_text="Google Drive is connected")).to_be_visible()
    folder.refresh_from_db()
    assert (folder.status, folder.last_error) == ("pending", "")  # its sync is queued
    expect(card.locator(".badge")).to_have_text("Pending")

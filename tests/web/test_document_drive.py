"""The document page of a Drive PDF too large to send whole (past `CONTENT_MAX_BYTES`), in a real
browser against the emulator: a person reads why and gets Drive's link, never the endpoint's JSON."""

from __future__ import annotations

import os

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from apps.library.models import File, Folder
from emulators.drive.server import DriveEmulator
from tests.support.browser import log_in
from tests.support.drive_content import drive_file

pytestmark = pytest.mark.django_db(transaction=True)

CAP = 10_000


@pytest.fixture(scope="module")
def drive_env(drive_env: dict[str, str]) -> dict[str, str]:
    # The server runs in its own process: its cap comes from the environment, not `settings`.
    return {**drive_env, "CONTENT_MAX_BYTES": str(CAP)}


@pytest.fixture
def scans(user, drive_emulator: DriveEmulator) -> Folder:
    root = drive_emulator.state.add_folder(f"Scans {user.pk}")
    return Folder.objects.create(
        owner=user,
        source="drive",
        external_id=root,
        name="Scans",
        status="ready",
        last_synced_at=timezone.now(),
        sync_interval_seconds=86_400,  # no sync from the page: the row is the index
    )


def big_pdf(drive_emulator: DriveEmulator, folder: Folder) -> File:
    content = b"%PDF-1.4\n" + os.urandom(CAP * 5)
    return drive_file(drive_emulator.state, folder=folder, name="survey.pdf", content=content)


def test_an_oversized_drive_pdf_offers_drive_in_place_of_its_viewer(
    drive_page: Page, drive_emulator: DriveEmulator, scans: Folder
) -> None:
    file = big_pdf(drive_emulator, scans)
    page = drive_page
    log_in(page)
    page.goto(f"/files/{file.pk}")

    message = page.locator("#original-too-large")
    expect(message.get_by_role("heading", name="Too large to show here")).to_be_visible()
    expect(message).to_contain_text("survey.pdf is 48.8 KB; files from Google Drive larger than 9.8 KB")
    link = message.get_by_role("link", name="Open in Google Drive")
    expect(link).to_have_attribute("href", file.source_extra["web_view_link"])
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(page.locator("#pdf-view")).to_have_count(0)
    expect(page.get_by_role("link", name="Download original")).to_have_count(0)
    expect(page.get_by_text('"detail"')).to_have_count(0)


def test_a_drive_pdf_grown_past_the_cap_shows_a_readable_page_in_its_frame(
    drive_page: Page, drive_emulator: DriveEmulator, scans: Folder
) -> None:
    file = big_pdf(drive_emulator, scans)
    # Listed before it grew: the page frames it, and the endpoint (which asks Drive) refuses it whole.
    File.objects.filter(pk=file.pk).update(size=1_000)
    page = drive_page
    log_in(page)
    page.goto(f"/files/{file.pk}")

    frame = page.frame_locator("#pdf-view")
    expect(frame.get_by_role("heading", name="Too large to show here")).to_be_visible()
    expect(frame.locator("main")).to_contain_text("survey.pdf is 48.8 KB; files from Google Drive larger than 9.8 KB")
    link = frame.get_by_role("link", name="Open in Google Drive")
    expect(link).to_have_attribute("href", file.source_extra["web_view_link"])
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(frame.get_by_text('"detail"')).to_have_count(0)

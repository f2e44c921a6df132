"""The folder settings page sets the folder's language through the API."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from apps.library.models import Folder
from tests.support.browser import log_in

pytestmark = pytest.mark.django_db(transaction=True)  # the server sees committed rows only


def test_the_settings_page_chooses_the_folders_language(page: Page, folder: Folder) -> None:
    log_in(page)
    page.goto(f"/folders/{folder.pk}/settings")
    language = page.get_by_label("Keyword search reads the words as")
    expect(language).to_have_value("")  # a new folder: not detected yet
    language.select_option("german")
    page.get_by_role("button", name="Save language").click()
    expect(page.locator("#language-done")).to_have_text("Saved. Keywords are being re-indexed in this language.")
    folder.refresh_from_db()
    assert folder.language == "german"
    page.reload()
    expect(page.get_by_label("Keyword search reads the words as")).to_have_value("german")

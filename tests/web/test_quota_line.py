"""The folders page's usage line: only the limits that are set, with what the user's folders use."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from apps.library.models import File, UserQuota
from tests.support.browser import log_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_folders_page_shows_the_set_limits_and_their_use(page: Page, user, folder) -> None:
    # An override row: the server's process reads it, as it would not a setting changed here.
    UserQuota.objects.create(user=user, folders=5, files=2000, bytes=5 * 1024**3)
    files = File.objects.filter(folder=folder, status="indexed").count()
    assert files > 0
    log_in(page)
    line = page.locator("#quota-usage")
    expect(line).to_contain_text(f"1 of 5 folders · {files} of 2,000 files · ")
    expect(line).to_contain_text("of 5.0 GB")
    expect(line).not_to_contain_text("chunks")


def test_without_limits_the_line_stays_hidden(page: Page, folder) -> None:
    log_in(page)
    expect(page.locator(".folder-card").first).to_be_visible()
    expect(page.locator("#quota-usage")).to_be_hidden()

"""Browser-test helpers shared by the web suite: where screenshots go and how a test logs in."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.servers import BASE_DIR

# The README's pictures are refreshed on purpose (SCREENSHOT_DIR=docs/screenshots make test), never
# as a side effect of a test run.
SCREENSHOTS = Path(os.environ.get("SCREENSHOT_DIR", BASE_DIR / "var" / "screenshots"))
PASSWORD = "alice-password"  # the `user` fixture's (tests/conftest.py)


def log_in(page: Page, username: str = "alice", password: str = PASSWORD) -> None:
    page.goto("/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Your folders")).to_be_visible()
    # The heading is server-rendered: wait for the page's scripts too, as `goto` does, so that a test's
    # first click does not beat the listener it is meant for.
    page.wait_for_load_state()

"""The folder page's live state: failed files listed with their reasons and retried from the page."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from apps.library.models import File, Folder
from tests.support.browser import log_in

pytestmark = pytest.mark.django_db(transaction=True)


def fail(folder: Folder, path: str, reason: str) -> File:
    # What a crashed parser leaves: the reason, and the file not settled.
    File.objects.filter(folder=folder, path=path).update(status="failed", error=reason, indexed_checksum="")
    Folder.objects.filter(pk=folder.pk).update(files_indexed=1)
    return File.objects.get(folder=folder, path=path)


@pytest.mark.worker
def test_a_failed_file_is_listed_with_its_reason_and_retried_until_indexed(
    page: Page, home_notes: Folder, celery_worker_process
) -> None:
    fail(home_notes, "car.txt", "RuntimeError: the parser crashed")
    log_in(page)
    page.goto(f"/folders/{home_notes.pk}/")

    problems = page.get_by_role("region", name="Files not indexed")
    row = problems.get_by_role("listitem").filter(has_text="car.txt")
    expect(row).to_contain_text("RuntimeError: the parser crashed")
    expect(page.locator("#folder-counts")).to_have_text("1 of 2 files indexed")
    retry = row.get_by_role("button", name="Retry car.txt")
    retry.focus()
    page.keyboard.press("Enter")

    expect(problems).to_be_hidden(timeout=60_000)  # the stream's `file` event took the row away
    expect(page.locator("#folder-counts")).to_have_text("2 of 2 files indexed")
    expect(page.get_by_role("progressbar", name="Files of Home notes done")).to_have_js_property("value", 2)
    assert File.objects.get(folder=home_notes, path="car.txt").status == "indexed"


@pytest.mark.worker
def test_retry_all_failed_retries_every_failed_file(page: Page, home_notes: Folder, celery_worker_process) -> None:
    fail(home_notes, "car.txt", "RuntimeError: the parser crashed")
    fail(home_notes, "boiler.md", "TimeoutError: took too long")
    log_in(page)
    page.goto(f"/folders/{home_notes.pk}/")
    problems = page.get_by_role("region", name="Files not indexed")
    expect(problems.get_by_role("listitem")).to_have_count(2)

    problems.get_by_role("button", name="Retry all failed").click()

    expect(problems).to_be_hidden(timeout=60_000)  # both rows gone as their `file` events arrived
    expect(page.locator("#folder-state")).to_have_text("Ready")
    expect(page.locator("#folder-counts")).to_have_text("2 of 2 files indexed")
    assert set(File.objects.filter(folder=home_notes).values_list("status", flat=True)) == {"indexed"}


@pytest.mark.parametrize("where", ["folders page", "folder page"])
def test_pages_follow_the_stream_and_do_not_poll_while_it_is_open(page: Page, home_notes: Folder, where) -> None:
    requests: list[str] = []
    page.on("request", lambda request: "/api/" in request.url and requests.append(request.url))
    log_in(page)
    url = "/" if where == "folders page" else f"/folders/{home_notes.pk}/"
    with page.expect_request(lambda request: f"/api/folders/{home_notes.pk}/events" in request.url):
        page.goto(url)
    expect(page.get_by_text("2 of 2 files indexed")).to_be_visible()
    page.wait_for_timeout(1_000)  # the page's own loads settle
    settled = len(requests)

    page.wait_for_timeout(5_000)  # several heartbeats (1 s on the test server), no event

    assert requests[settled:] == []

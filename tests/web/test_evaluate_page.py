"""The Evaluate page in a real browser, on a real worker: a set is made from the textarea (a wrong
path refused by name), run, its row fills in live from the folder's stream with the metrics and
the trend; then the folder is made worse in its Settings (the recipes excluded, synced by the
worker), the set is run again, and the page says the run regressed and by how much, in words.
A viewer reads the same results without the controls to make or run sets. No serious or
critical axe violation on the page at 1280 px light and 390 px dark."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from apps.evaluation import enqueue
from apps.evaluation.execution import evaluation_run_execute
from apps.evaluation.services import QuestionSpec, evaluation_run_start, evaluation_set_create
from apps.library.models import File, Folder, FolderMembership
from tests.support.browser import SCREENSHOTS, log_in
from tests.support.evaluation_folder import QUESTIONS, WORSE_EXCLUDE, evaluation_folder, set_text
from tests.support.waiting import wait_for
from tests.web.test_accessibility import blocking_violations

pytestmark = pytest.mark.django_db(transaction=True)

RUN_TIMEOUT_MS = 60_000


@pytest.fixture
def notes(user) -> Iterator[Folder]:
    with evaluation_folder(user) as folder:
        yield folder


@pytest.mark.worker
def test_a_set_is_made_run_and_a_worse_configuration_is_flagged(page: Page, notes: Folder, celery_worker_process):
    log_in(page)
    page.goto(f"/folders/{notes.pk}/")
    page.get_by_role("navigation", name=notes.name).get_by_role("link", name="Evaluate").click()
    expect(page.get_by_role("heading", name="Evaluation sets")).to_be_visible()
    expect(page.get_by_text("No evaluation set yet: make one below.")).to_be_visible()

    name = page.get_by_label("Name", exact=True)
    questions = page.get_by_label("Questions")
    name.fill("Household checks")
    questions.fill(set_text([*QUESTIONS, {"question": "Where is the lease?", "expected_files": ["housing/lease.pdf"]}]))
    page.get_by_role("button", name="Create set").click()
    expect(page.locator("#create-error")).to_have_text(
        "Question 5 expects 'housing/lease.pdf', which is not a file of this folder."
    )

    questions.fill(set_text(QUESTIONS))
    page.get_by_role("button", name="Create set").click()
    expect(page.get_by_role("heading", level=2, name="Household checks")).to_be_visible()
    expect(page.get_by_text("Not run yet.")).to_be_visible()
    expect(page.get_by_role("button", name="Household checks")).to_contain_text("4 questions")

    page.get_by_label("Mode").select_option("standard")
    page.get_by_role("button", name="Run", exact=True).click()
    rows = page.locator("#runs-body tr.run-row")
    expect(rows).to_have_count(1)
    first = rows.first
    # Filled in by the stream's `evaluation.finished`: the page is not reloaded.
    expect(first.locator("[data-field=status]")).to_have_text("Done", timeout=RUN_TIMEOUT_MS)
    expect(first.locator("[data-field=hit_at_5]")).to_have_text("100%")
    expect(first.locator("[data-field=mrr]")).to_have_text("1.00")
    expect(first.locator("[data-field=facts_found]")).to_have_text("100%")
    expect(first.locator("[data-field=regression]")).to_have_text("First run")
    expect(page.locator("#run-progress")).to_have_text("Run finished.")
    expect(page.locator("#trend-chart polyline")).to_have_count(3)
    expect(page.locator("#trend-text")).to_contain_text("1 finished run")

    # A worse configuration: the recipes excluded in the folder's settings; the worker's sync
    # takes them out of the index.
    page.get_by_role("link", name="Settings").click()
    patterns = page.locator("#exclude-patterns")
    patterns.fill(f"{patterns.input_value()}\n{WORSE_EXCLUDE}")
    page.locator("#exclude-form").get_by_role("button").click()
    expect(page.locator("#exclude-done")).not_to_be_empty()
    wait_for(
        lambda: not File.objects.filter(folder=notes, path__startswith=WORSE_EXCLUDE).exists(),
        timeout=60,
        what="the sync to drop the excluded recipes",
    )

    page.get_by_role("link", name="Evaluate").click()
    expect(rows).to_have_count(1)
    page.get_by_role("button", name="Run", exact=True).click()
    expect(rows).to_have_count(2)
    latest = rows.first
    expect(latest.locator("[data-field=status]")).to_have_text("Done", timeout=RUN_TIMEOUT_MS)
    expect(latest.locator("[data-field=hit_at_5]")).to_have_text("75%")
    expect(latest.locator("[data-field=regression]")).to_have_text("Regressed")
    said = "Regressed: hit@5 100% → 75%, MRR 1.00 → 0.75, facts found 100% → 75%"
    expect(page.locator("#runs-body tr.run-detail-row")).to_have_text(said)  # under the flagged run
    notice = page.locator("#regression-notice")
    expect(notice).to_be_visible()
    expect(notice).to_have_text(f"The latest run is worse than the one before. {said}")
    expect(page.locator("#run-progress")).to_have_text("Run finished: worse than the run before.")
    expect(page.locator("#trend-text")).to_contain_text("2 finished runs")
    expect(page.get_by_role("button", name="Household checks")).to_contain_text("Regressed")

    latest.locator("[data-field=show]").click()  # the run's date opens its answers
    answers = page.locator("#results-list > li")
    expect(answers).to_have_count(4)
    expect(answers.nth(1)).to_contain_text("I found nothing in this folder")
    expect(answers.nth(1).locator("[data-field=rank]")).to_have_text("not cited")
    expect(answers.nth(0).locator("[data-field=rank]")).to_have_text("cited file 1")
    expect(page.locator("#results-configuration")).to_contain_text("3 files indexed")

    assert page.evaluate("document.documentElement.scrollWidth") <= 1280  # the runs table scrolls in its card
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "evaluate.png", full_page=True)
    assert blocking_violations(page, "evaluate, a flagged run") == []


def test_a_viewer_reads_the_results_without_the_controls(
    browser, web_server, notes: Folder, user, django_user_model, monkeypatch
):
    monkeypatch.setattr(enqueue, "task_send", lambda name, *, args: None)  # executed here instead
    evaluation_set = evaluation_set_create(
        folder=notes, name="Household checks", questions=[QuestionSpec(**question) for question in QUESTIONS], user=user
    )
    evaluation_run_execute(run_id=evaluation_run_start(evaluation_set=evaluation_set, user=user).pk)
    viewer = django_user_model.objects.create_user(username="vera", password="vera-password")
    FolderMembership.objects.create(folder=notes, user=viewer, role="viewer")
    context = browser.new_context(base_url=web_server.url, viewport={"width": 390, "height": 844}, color_scheme="dark")
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        log_in(page, "vera", "vera-password")
        page.goto(f"/folders/{notes.pk}/evaluate")

        expect(page.locator("#runs-body tr [data-field=hit_at_5]")).to_have_text("100%")
        expect(page.get_by_text("its owner or an editor makes and runs them")).to_be_visible()
        for control in ("Create set", "Run", "Delete set"):
            expect(page.get_by_role("button", name=control, exact=True)).to_have_count(0)
        expect(page.get_by_label("Run every night")).to_have_count(0)
        assert page.evaluate("document.getElementById('main').scrollWidth") <= 390
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / "evaluate-mobile.png", full_page=True)
        assert blocking_violations(page, "evaluate, a viewer at 390 px dark") == []
    finally:
        context.close()

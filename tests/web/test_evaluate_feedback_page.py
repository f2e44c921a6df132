"""The Evaluate tab's sets made without writing them, in a real browser: *Generate* fills the
create form's box with questions drawn from the folder, one is deleted in review, the set is
saved and run on a real worker. And its *Feedback* view: the counts per week, a filter, and an
answer rated not helpful added to an evaluation set in one click, its file picked by name; the
set then holds its question. No serious or critical axe violation on the Feedback view."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from apps.evaluation.models import EvaluationQuestion, EvaluationSet
from apps.library.models import Folder, FolderMembership
from tests.support.browser import SCREENSHOTS, log_in
from tests.support.evaluation_folder import GENERATION_FILES, evaluation_folder
from tests.support.rated_answers import asked_and_rated
from tests.web.test_accessibility import blocking_violations

pytestmark = pytest.mark.django_db(transaction=True)

RUN_TIMEOUT_MS = 60_000
RENEWAL = "When does the homeowner's policy with Northwind Mutual renew?"


@pytest.fixture
def papers(user) -> Iterator[Folder]:
    with evaluation_folder(user, name="Household papers", files=GENERATION_FILES) as folder:
        yield folder


@pytest.mark.worker
def test_a_generated_set_is_reviewed_saved_and_run(page: Page, papers: Folder, celery_worker_process):
    log_in(page)
    page.goto(f"/folders/{papers.pk}/evaluate")
    expect(page.get_by_text("No evaluation set yet: make one below.")).to_be_visible()

    page.get_by_label("How many to draw").fill("6")
    page.get_by_role("button", name="Generate", exact=True).click()
    status = page.locator("#generate-status")
    expect(status).to_contain_text("6 questions drawn (seed ")
    box = page.get_by_label("Questions")
    blocks = box.input_value().split("\n\n")
    assert len(blocks) == 6
    assert all(block.startswith("# from ") and "\nfile: " in block for block in blocks)
    expect(page.get_by_label("Name", exact=True)).to_have_value("Generated questions")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "evaluate-generate.png", full_page=True)

    removed = blocks.pop(1)  # the review: one question is not wanted
    box.fill("\n\n".join(blocks))
    page.get_by_role("button", name="Create set").click()

    expect(page.get_by_role("heading", level=2, name="Generated questions")).to_be_visible()
    expect(page.get_by_role("button", name="Generated questions")).to_contain_text("5 questions")
    saved = EvaluationSet.objects.get(folder=papers)
    asked = list(saved.questions.order_by("position").values_list("question", flat=True))
    assert len(asked) == 5 and removed.split("\n")[1] not in asked
    assert all(question.expected_files for question in saved.questions.all())

    page.get_by_role("button", name="Run", exact=True).click()
    row = page.locator("#runs-body tr.run-row").first
    expect(row.locator("[data-field=status]")).to_have_text("Done", timeout=RUN_TIMEOUT_MS)
    expect(row.locator("[data-field=regression]")).to_have_text("First run")
    saved.refresh_from_db()
    assert saved.runs.get().metrics["questions"] == 5


def test_a_thumbs_down_answer_joins_a_set_in_one_click(page: Page, papers: Folder, user):
    asked_and_rated(folder=papers, user=user, question=RENEWAL, rating="down", comment="Wrong date.")
    asked_and_rated(
        folder=papers, user=user, question="How many eggs do the pancakes need?", rating="up", rated_days_ago=14
    )
    log_in(page)
    page.goto(f"/folders/{papers.pk}/evaluate")
    page.get_by_role("navigation", name="Evaluation").get_by_role("link", name="Feedback").click()

    expect(page.locator("#feedback-totals")).to_have_text("Helpful: 1 · Not helpful: 1")
    expect(page.locator("#weeks-body tr")).to_have_count(2)
    answers = page.locator("#rated-list > li")
    expect(answers).to_have_count(2)
    page.get_by_label("Rating", exact=True).select_option("down")
    expect(answers).to_have_count(1)
    down = answers.first
    expect(down.locator("[data-field=question]")).to_have_text(RENEWAL)
    expect(down.locator("[data-field=comment]")).to_have_text("Comment: Wrong date.")

    down.get_by_role("button", name="Add to evaluation").click()
    picker = down.get_by_label("The file that answers it")
    expect(picker).to_be_focused()
    picker.press_sequentially("home-pol")
    # The folder's files whose name holds what was typed, offered to choose from.
    expect(down.locator("datalist option[value='insurance/home-policy.md']")).to_have_count(1)
    picker.fill("insurance/home-policy.md")
    down.get_by_label("A fact the answer must state (optional)").fill("June 1")
    down.get_by_role("button", name="Add the question").click()

    expect(down.locator("[data-field=sets]")).to_have_text("Added as question 1. In evaluation: From feedback")
    question = EvaluationQuestion.objects.get()
    assert (question.question, question.expected_files, question.expected_facts) == (
        RENEWAL,
        ["insurance/home-policy.md"],
        ["June 1"],
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "evaluate-feedback.png", full_page=True)
    assert blocking_violations(page, "evaluate, feedback") == []

    down.get_by_role("link", name="From feedback").click()
    expect(page.get_by_role("heading", level=2, name="From feedback")).to_be_visible()
    expect(page.locator("#questions li")).to_have_count(1)


def test_a_viewer_reads_the_counts_and_their_own_ratings_on_a_phone(
    browser, web_server, papers, user, django_user_model
):
    viewer = django_user_model.objects.create_user(username="vera", password="vera-password")
    FolderMembership.objects.create(folder=papers, user=viewer, role="viewer")
    asked_and_rated(folder=papers, user=user, question=RENEWAL, rating="down")
    asked_and_rated(folder=papers, user=viewer, question="When is the passport appointment?", rating="down")
    context = browser.new_context(base_url=web_server.url, viewport={"width": 390, "height": 844}, color_scheme="dark")
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        log_in(page, "vera", "vera-password")
        page.goto(f"/folders/{papers.pk}/evaluate/feedback")

        expect(page.locator("#feedback-totals")).to_have_text("Helpful: 0 · Not helpful: 2")
        answers = page.locator("#rated-list > li")
        expect(answers).to_have_count(1)
        expect(answers.first.locator("[data-field=question]")).to_have_text("When is the passport appointment?")
        expect(page.get_by_text("the rated answers listed are your own")).to_be_visible()
        expect(page.get_by_role("button", name="Add to evaluation")).to_have_count(0)
        assert page.evaluate("document.getElementById('main').scrollWidth") <= 390
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / "evaluate-feedback-mobile.png", full_page=True)
        assert blocking_violations(page, "evaluate feedback, a viewer at 390 px dark") == []
    finally:
        context.close()

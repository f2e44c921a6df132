"""Asking a folder in a real browser: the answer streams in from a Celery worker over SSE."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import SCREENSHOTS, log_in
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall
from tests.support.questions import INSURANCE_QUESTION

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

W2_QUESTION = "How much federal income tax was withheld on the 2024 W-2?"

# Set once the answer has text while it is still marked as streaming, i.e. before `message`.
WATCH_STREAMING = """
window.sawStreamingText = false;
new MutationObserver(() => {
  if (document.querySelector(".message-agent.streaming .answer")?.textContent.trim()) window.sawStreamingText = true;
}).observe(document.getElementById("messages"), {subtree: true, childList: true, characterData: true});
"""


def open_chat(page: Page, folder) -> None:
    log_in(page)
    page.goto(f"/folders/{folder.pk}/")
    expect(page.get_by_role("heading", level=1, name=folder.name)).to_be_visible()


def answers(page: Page):
    return page.locator(".message-agent")


def test_answer_streams_in_with_citations_that_link_their_passage(page: Page, folder, celery_worker_process) -> None:
    open_chat(page, folder)
    expect(page.get_by_role("switch", name="Agent mode — slower, more thorough")).not_to_be_checked()
    page.evaluate(WATCH_STREAMING)

    page.get_by_label("Your question").fill(W2_QUESTION)
    page.get_by_label("Your question").press("Enter")

    expect(page.locator(".message-user")).to_have_text(re.compile(re.escape(W2_QUESTION)))
    expect(page.get_by_label("Your question")).to_have_value("")
    expect(page.locator("#run-status")).to_have_text("Answer ready.")
    answer = answers(page).last
    expect(answer.locator(".answer")).to_contain_text("12,300")
    assert page.evaluate("window.sawStreamingText"), "the answer appeared only whole, never streaming"
    # Screen readers hear the finished answer through a polite live region, once.
    announcer = page.locator("#answer-announcer")
    expect(announcer).to_have_attribute("aria-live", "polite")
    expect(announcer).to_contain_text("12,300")
    expect(answer.locator(".message-meta")).to_contain_text("Standard")

    # A citation opens its document page at the cited chunk (tests/web/test_document_page.py follows one).
    citation = answer.get_by_role("link", name=re.compile(r"^Source \d+: W2_Acme_2024\.pdf · page 1$")).first
    expect(citation).to_have_attribute("href", re.compile(r"^/files/\d+\?chunk=\d+&quote=\S+$"))

    # The conversation is listed and kept: opening it again shows the history, not a new run.
    expect(page).to_have_url(re.compile(r"\?c=\d+$"))
    expect(page.get_by_role("link", name=re.compile(re.escape(W2_QUESTION)))).to_have_attribute("aria-current", "page")
    page.reload()
    expect(answers(page)).to_have_count(1)
    expect(answers(page).locator(".answer")).to_contain_text("12,300")
    expect(answers(page).locator(".cite").first).to_be_visible()


def test_agent_mode_by_keyboard_shows_each_tool_step_as_it_runs(page: Page, folder, celery_worker_process) -> None:
    open_chat(page, folder)
    question = page.get_by_label("Your question")
    for _ in range(30):
        if question.evaluate("element => element === document.activeElement"):
            break
        page.keyboard.press("Tab")
    expect(question).to_be_focused()
    page.keyboard.type(INSURANCE_QUESTION)
    page.keyboard.press("Tab")
    agent_mode = page.get_by_role("switch", name="Agent mode — slower, more thorough")
    expect(agent_mode).to_be_focused()
    page.keyboard.press("Space")
    expect(agent_mode).to_be_checked()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Send")).to_be_focused()
    page.keyboard.press("Enter")

    answer = answers(page).last
    steps = answer.get_by_role("list", name="Agent steps").get_by_role("listitem")
    expect(steps.first).to_contain_text("search_folder")
    expect(page.locator("#run-status")).to_have_text("Answer ready.", timeout=30_000)
    expect(answer.locator(".answer")).to_contain_text("June 1")
    expect(answer.locator(".cite").first).to_be_visible()
    for step in steps.all():
        expect(step).to_have_attribute("data-state", "complete")
        expect(step.locator(".step-duration")).to_have_text(re.compile(r"^\d+(\.\d)? (ms|s)$"))
    expect(answer.locator(".message-meta")).to_contain_text(re.compile(r"Agent mode · \d+ steps?"))

    first = steps.first.locator("summary")
    first.focus()
    page.keyboard.press("Enter")
    expect(steps.first.locator("pre").first).to_contain_text('"query"')
    expect(steps.first.locator("pre").nth(1)).not_to_be_empty()
    # The search's structured output: each document with its score, its passages under their [n].
    found = steps.first.locator(".step-detail")
    expect(found).to_contain_text("Documents found")
    expect(found.locator(".step-score").first).to_have_text(re.compile(r"^score 0\.\d+$"))
    expect(found.locator("li strong").first).to_have_text(re.compile(r"^\[1\]"))

    # For the README: the whole answer in view, focus back in the composer as after sending.
    page.set_viewport_size({"width": 1280, "height": 1040})
    page.locator("#messages-scroll").evaluate("element => { element.scrollTop = element.scrollHeight; }")
    question.focus()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "chat-agent.png")


@pytest.fixture
def slow_model(settings, monkeypatch) -> Iterator[LLMWireStub]:
    """The real OpenAI client in the worker, against a local stub whose answers can be held back.

    Request it before `celery_worker_process`: the worker takes its provider settings at start.
    """
    with LLMWireStub() as stub:
        for name, value in stub.settings_for("openai").items():
            monkeypatch.setenv(name, str(value))
        settings.LLM_PROVIDER = "openai"
        yield stub


def test_reload_mid_answer_replays_the_run_and_completes(
    page: Page, folder, slow_model: LLMWireStub, celery_worker_process
) -> None:
    slow_model.reply_tool_calls(StubToolCall(id="call_1", name="search_folder", arguments={"query": "W-2 withheld"}))
    slow_model.reply_text("Federal income tax withheld on the 2024 W-2 was 12,300 dollars [1].", delay=4)
    events_requests: list[str] = []
    # The run's stream only: the page also follows its folder's events (indexing progress).
    page.on("request", lambda request: "/api/runs/" in request.url and events_requests.append(request.url))
    open_chat(page, folder)

    page.get_by_role("switch", name="Agent mode — slower, more thorough").check()
    page.get_by_label("Your question").fill(W2_QUESTION)
    page.get_by_role("button", name="Send").click()
    step = answers(page).last.locator(".step")
    expect(step).to_have_attribute("data-state", "complete")
    assert answers(page).last.locator(".answer").text_content() == ""
    stored = page.evaluate("Object.values(sessionStorage)")
    assert len(stored) == 1 and "runId" in stored[0]

    page.reload()

    # The answer was not saved before the reload: only the replayed events can bring the step back.
    answer = answers(page).last
    expect(answer.locator(".step")).to_have_count(1)
    expect(answer.locator(".step")).to_contain_text("search_folder")
    expect(answer.locator(".answer")).to_contain_text("12,300 dollars")
    expect(answer.locator(".cite")).to_have_count(1)
    expect(page.locator("#run-status")).to_have_text("Answer ready.")
    expect(answers(page)).to_have_count(1)
    expect(page.locator(".message-user")).to_have_count(1)
    assert page.evaluate("sessionStorage.length") == 0
    assert len(events_requests) == 2 and events_requests[0] == events_requests[1]

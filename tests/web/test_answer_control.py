"""Controlling an answer in a real browser, with a real worker: stop it mid-stream, see an agent's
steps again after a reload, rate it (the metrics count it), regenerate it, rename and delete the
conversation."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, Route, expect

from apps.chat.models import AgentRun, Conversation, Message, MessageFeedback, RunStatus
from tests.support.browser import log_in
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall
from tests.support.questions import INSURANCE_QUESTION

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

W2_QUESTION = "How much federal income tax was withheld on the 2024 W-2?"
# Eighty words at about seven a second: over ten seconds of streaming unless stopped.
WORDS = [f"word{index}" for index in range(80)]


def open_chat(page: Page, folder) -> None:
    log_in(page)
    page.goto(f"/folders/{folder.pk}/")
    expect(page.get_by_role("heading", level=1, name=folder.name)).to_be_visible()


def ask(page: Page, question: str, *, agent_mode: bool = False) -> None:
    if agent_mode:
        page.get_by_role("switch", name="Agent mode — slower, more thorough").check()
    page.get_by_label("Your question").fill(question)
    page.get_by_role("button", name="Send").click()


def answers(page: Page):
    return page.locator(".message-agent")


def test_stop_a_streaming_answer_keeps_its_partial_text_marked_stopped(
    page: Page, folder, worker_model: LLMWireStub, celery_worker_process
) -> None:
    worker_model.reply_text(" ".join(WORDS), chunk_delay=0.15)
    open_chat(page, folder)
    ask(page, W2_QUESTION)
    answer = answers(page).last
    expect(answer.locator(".answer")).to_contain_text("word3")
    stop = page.get_by_role("button", name="Stop")

    stop.click()

    expect(page.locator("#run-status")).to_have_text("Stopped.")
    expect(stop).to_be_hidden()
    expect(answer.locator(".stopped-note")).to_have_text("Stopped: the answer was cut short.")
    shown = answer.locator(".answer").inner_text().strip()
    assert 4 <= len(shown.split()) < len(WORDS) - 10, shown
    run = AgentRun.objects.get()
    assert run.status == RunStatus.CANCELLED
    assert Message.objects.get(pk=run.answer_id).content["text"].strip() == shown
    expect(page.get_by_role("button", name="Send")).to_be_enabled()

    page.reload()
    answer = answers(page).last
    expect(answer.locator(".answer")).to_have_text(shown)
    expect(answer.locator(".stopped-note")).to_be_visible()


def test_an_agent_answer_shows_the_same_steps_after_a_reload(page: Page, folder, celery_worker_process) -> None:
    open_chat(page, folder)
    ask(page, INSURANCE_QUESTION, agent_mode=True)
    expect(page.locator("#run-status")).to_have_text("Answer ready.", timeout=30_000)
    answer = answers(page).last
    steps = answer.get_by_role("list", name="Agent steps").get_by_role("listitem")
    expect(steps.first).to_contain_text("search_folder")
    live = {
        "steps": [step.inner_text() for step in steps.all()],
        "states": [step.get_attribute("data-state") for step in steps.all()],
        "answer": answer.locator(".answer").inner_html(),
        "meta": answer.locator(".message-meta").inner_text(),
    }
    assert re.search(r"waited \d+(\.\d)? (ms|s) \(", live["meta"]), live["meta"]

    page.reload()

    answer = answers(page).last
    steps = answer.get_by_role("list", name="Agent steps").get_by_role("listitem")
    expect(steps).to_have_count(len(live["steps"]))
    assert [step.inner_text() for step in steps.all()] == live["steps"]
    assert [step.get_attribute("data-state") for step in steps.all()] == live["states"]
    assert answer.locator(".answer").inner_html() == live["answer"]
    assert answer.locator(".message-meta").inner_text() == live["meta"]
    steps.first.locator("summary").click()
    expect(steps.first.locator("pre").first).to_contain_text('"query"')


def test_rate_an_answer_and_the_metrics_count_it(page: Page, folder, celery_worker_process) -> None:
    open_chat(page, folder)
    ask(page, W2_QUESTION)
    expect(page.locator("#run-status")).to_have_text("Answer ready.")
    answer = answers(page).last
    up = answer.get_by_role("button", name="Helpful", exact=True)
    down = answer.get_by_role("button", name="Not helpful")

    down.click()
    expect(down).to_have_attribute("aria-pressed", "true")
    up.click()

    expect(up).to_have_attribute("aria-pressed", "true")
    expect(down).to_have_attribute("aria-pressed", "false")
    expect(answer.get_by_role("status")).to_have_text("Thanks for the feedback.")
    feedback = page.request.get("/api/metrics/agent").json()["feedback"]
    assert feedback["up"] == 1 and feedback["down"] == 0
    assert feedback["by_mode"]["standard"] == {"up": 1, "down": 0}
    assert MessageFeedback.objects.get().rating == "up"
    page.reload()
    expect(answers(page).last.get_by_role("button", name="Helpful", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )


def test_regenerate_then_rename_and_delete_the_conversation(page: Page, folder, celery_worker_process) -> None:
    open_chat(page, folder)
    ask(page, W2_QUESTION)
    expect(page.locator("#run-status")).to_have_text("Answer ready.")

    answers(page).last.get_by_role("button", name="Regenerate").click()

    expect(answers(page)).to_have_count(2)
    expect(page.locator("#run-status")).to_have_text("Answer ready.")
    expect(answers(page).last.locator(".answer")).to_contain_text("12,300")
    expect(answers(page).first.get_by_role("button", name="Regenerate")).to_be_hidden()
    runs = list(AgentRun.objects.order_by("created_at"))
    assert len(runs) == 2 and runs[0].question_id == runs[1].question_id
    assert Message.objects.filter(role="user").count() == 1

    sidebar = page.locator("#conversation-list")
    sidebar.get_by_role("button", name=re.compile("^Rename")).click()
    title = sidebar.get_by_label("Conversation title")
    expect(title).to_be_focused()
    title.fill("Taxes withheld")
    title.press("Enter")
    expect(sidebar.get_by_role("link", name=re.compile("Taxes withheld"))).to_be_visible()
    assert Conversation.objects.get().title == "Taxes withheld"

    page.once("dialog", lambda dialog: dialog.accept())
    sidebar.get_by_role("button", name="Delete “Taxes withheld”").click()

    expect(page).to_have_url(re.compile(rf"/folders/{folder.pk}/$"))
    expect(page.locator("#conversation-list")).to_contain_text("No conversations yet.")
    assert not Conversation.objects.exists()


def test_a_list_refresh_landing_during_a_rename_leaves_the_title_field_open(
    page: Page, folder, celery_worker_process
) -> None:
    open_chat(page, folder)
    ask(page, W2_QUESTION)
    sidebar = page.locator("#conversation-list")
    expect(sidebar.get_by_role("button", name=re.compile("^Rename"))).to_be_visible()
    held: list[Route] = []
    page.route(re.compile(r"/api/conversations\?folder_id="), lambda route: held.append(route))

    # The regenerated answer's end refreshes the list; that refresh is held until the field is open.
    answers(page).last.get_by_role("button", name="Regenerate").click()
    expect(answers(page)).to_have_count(2)
    expect(page.locator("#run-status")).to_have_text("Answer ready.")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1
    sidebar.get_by_role("button", name=re.compile("^Rename")).click()
    title = sidebar.get_by_label("Conversation title")
    expect(title).to_be_focused()
    with page.expect_response(re.compile(r"/api/conversations\?folder_id=")):
        held[0].continue_()
    page.unroute(re.compile(r"/api/conversations\?folder_id="))
    page.wait_for_timeout(300)  # the page handles the late list, or would sweep the field away

    expect(title).to_be_focused()
    title.fill("Taxes withheld")
    title.press("Enter")
    expect(sidebar.get_by_role("link", name=re.compile("Taxes withheld"))).to_be_visible()
    assert Conversation.objects.get().title == "Taxes withheld"


def test_a_long_step_line_wraps_inside_the_column(
    page: Page, folder, worker_model: LLMWireStub, celery_worker_process
) -> None:
    query = "withheld" * 40  # one unbreakable word, far wider than the column
    worker_model.reply_tool_calls(StubToolCall(id="call_1", name="search_folder", arguments={"query": query}))
    worker_model.reply_text("Federal income tax withheld on the 2024 W-2 was 12,300 dollars [1].")
    open_chat(page, folder)
    column = page.locator("#messages").bounding_box()

    ask(page, W2_QUESTION, agent_mode=True)

    expect(page.locator("#run-status")).to_have_text("Answer ready.")
    brief = answers(page).last.locator(".step-brief").bounding_box()
    bubble = answers(page).last.locator(".bubble").bounding_box()
    after = page.locator("#messages").bounding_box()
    assert column and brief and bubble and after
    assert after["width"] == column["width"] <= 860
    assert bubble["x"] + bubble["width"] <= after["x"] + after["width"] + 1
    assert brief["height"] > 40, "the long line did not wrap"

"""In a real browser: the model fails and the page still answers, with the notice and no internals;
an answer cut at its length limit offers Continue, which completes it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import log_in
from tests.support.llm_wire_replies import StubFault
from tests.support.llm_wire_stub import LLMWireStub

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

W2_QUESTION = "How much federal income tax was withheld on the 2024 W-2?"
LEAKY = (
    "invalid key sk-live-9f8e7d6c5b4a3f2e1d0c for https://llm-gateway.internal.example/v1/keys\n"
    'Traceback (most recent call last):\n  File "/srv/gateway/auth.py", line 41, in check\nKeyError: tenant'
)
LEAKED = ["9f8e7d6c5b4a", "llm-gateway.internal.example", "Traceback", "/srv/gateway", "KeyError", "stub fault"]
CUT = "Box 2 federal income tax withheld on the 2024 W-2 was"


def ask(page: Page, folder, question: str) -> None:
    log_in(page)
    page.goto(f"/folders/{folder.pk}/")
    page.get_by_label("Your question").fill(question)
    page.get_by_label("Your question").press("Enter")


def test_a_failing_model_still_answers_with_the_notice_and_no_internals(
    page: Page, folder, worker_model: LLMWireStub, celery_worker_process
) -> None:
    worker_model.queue(StubFault(status=401, message=LEAKY))

    ask(page, folder, W2_QUESTION)

    expect(page.locator("#run-status")).to_have_text("Answer ready.")
    answer = page.locator(".message-agent").last
    expect(answer.get_by_role("note")).to_have_text("The model is unavailable; these are the most relevant passages.")
    expect(answer.locator(".answer")).to_contain_text("12,300")
    expect(answer.locator(".cite").first).to_be_visible()
    expect(answer.locator(".message-meta")).to_contain_text("The model service refused this server's credentials.")
    assert len(worker_model.requests) == 1
    page.reload()  # the stored answer, as the conversation API gives it
    expect(page.locator(".message-agent").last.get_by_role("note")).to_be_visible()
    html = page.content()
    assert not [secret for secret in LEAKED if secret in html]


def test_continue_completes_an_answer_cut_at_its_length_limit(
    page: Page, folder, worker_model: LLMWireStub, celery_worker_process
) -> None:
    worker_model.reply_text(CUT, stop_reason="max_tokens")
    worker_model.reply_text(" 12,300 dollars [1].")

    ask(page, folder, W2_QUESTION)

    answer = page.locator(".message-agent").last
    expect(answer.locator(".message-truncated")).to_contain_text("The answer was cut off at its length limit.")
    expect(answer.locator(".answer")).to_have_text(CUT)
    answer.get_by_role("button", name="Continue").click()

    expect(answer.locator(".answer")).to_have_text(f"{CUT} 12,300 dollars [1].")
    expect(answer.locator(".cite")).to_have_count(1)
    expect(answer.locator(".message-truncated")).to_have_count(0)
    expect(page.locator("#run-status")).to_have_text("Answer ready.")
    assert worker_model.requests[1].body["messages"][-2] == {"role": "assistant", "content": CUT}
    page.reload()
    expect(page.locator(".message-agent")).to_have_count(1)
    expect(page.locator(".message-agent .answer")).to_have_text(re.compile(r"withheld on the 2024 W-2 was 12,300"))
    expect(page.get_by_role("button", name="Continue")).to_have_count(0)

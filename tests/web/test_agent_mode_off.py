"""The chat page on a server with AGENT_MODE_ENABLED off: no Agent-mode toggle, questions asked in
standard mode even by a browser that had chosen agent mode, and an agent answer asked through the
API shown with its notice."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from apps.chat.agent.runner import AGENT_MODE_OFF
from apps.chat.models import AgentRun
from apps.chat.services import chat_start, run_execute
from tests.support.browser import log_in
from tests.support.servers import BASE_DIR, RunningServer, start_uvicorn, test_database_env
from tests.web.conftest import new_page

pytestmark = pytest.mark.django_db(transaction=True)

W2_QUESTION = "How much federal income tax was withheld on the 2024 W-2?"


@pytest.fixture(scope="module")
def agent_off_server(django_db_setup, django_db_blocker) -> Iterator[RunningServer]:
    env = test_database_env(
        EMBEDDING_PROVIDER="hash",
        LLM_PROVIDER="extractive",
        THROTTLE_CHAT="1000/min",
        SSE_HEARTBEAT_SECONDS="1",
        AGENT_MODE_ENABLED="false",
    )
    with start_uvicorn(env=env, log_path=BASE_DIR / "var" / f"test-web-agent-off-{os.getpid()}.log") as server:
        yield server


@pytest.fixture
def off_page(browser: Browser, agent_off_server: RunningServer) -> Iterator[Page]:
    with new_page(browser, agent_off_server, height=860) as page:
        yield page


@pytest.mark.worker
def test_the_page_offers_no_toggle_and_asks_in_standard_mode(off_page: Page, folder, celery_worker_process) -> None:
    off_page.add_init_script("localStorage.setItem('folderchat:agent-mode', 'on')")  # chosen before the switch
    log_in(off_page)
    off_page.goto(f"/folders/{folder.pk}/")

    expect(off_page.get_by_role("switch")).to_have_count(0)
    off_page.get_by_label("Your question").fill(W2_QUESTION)
    off_page.get_by_role("button", name="Send").click()

    expect(off_page.locator("#run-status")).to_have_text("Answer ready.")
    assert AgentRun.objects.get().mode == "standard"
    answer = off_page.locator(".message-agent").last
    expect(answer.locator(".message-meta")).to_contain_text("Standard")
    expect(answer.locator(".answer")).to_contain_text("12,300")


def test_an_agent_answer_asked_through_the_api_shows_why_it_is_standard(off_page: Page, folder, settings) -> None:
    settings.AGENT_MODE_ENABLED = False
    asked = chat_start(user=folder.owner, folder=folder, text=W2_QUESTION, agent_mode=True)
    run = run_execute(run_id=asked.pk)
    log_in(off_page)

    off_page.goto(f"/folders/{folder.pk}/?c={run.conversation_id}")

    answer = off_page.locator(".message-agent").last
    expect(answer.get_by_role("note")).to_have_text(AGENT_MODE_OFF)
    expect(answer.locator(".message-meta")).to_contain_text("answered in standard mode")

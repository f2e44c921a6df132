"""Stop on a real Celery worker: a slowly streaming answer (the real OpenAI SDK against the wire
stub) is cancelled mid-stream through the API and ends `cancelled` with its partial text."""

from __future__ import annotations

import time

import pytest

from apps.chat.models import AgentRun, Message, RunStatus
from apps.chat.services import chat_start
from apps.core.events import events_after, run_channel
from tests.support.questions import W2_QUESTION
from tests.support.waiting import wait_for
from workers.agent import execute_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

# Sixty words at ten a second: six seconds of streaming unless stopped.
WORDS = [f"word{index}" for index in range(60)]
CHUNK_SECONDS = 0.1


def streamed_text(run: AgentRun) -> str:
    events = events_after(channel=run_channel(run.pk))
    return "".join(event.data["text"] for event in events if event.type == "text_delta")


def test_a_streaming_answer_is_stopped_mid_stream_and_keeps_its_partial_text(
    worker_model, celery_worker_process, library, auth_client
):
    worker_model.reply_text(" ".join(WORDS), chunk_delay=CHUNK_SECONDS)
    run = chat_start(user=library.folder.owner, folder=library.folder, text=W2_QUESTION)
    execute_run.delay(str(run.pk))
    wait_for(lambda: len(streamed_text(run).split()) >= 3, timeout=30, what="the answer to start streaming")

    response = auth_client.post(f"/api/runs/{run.pk}/cancel")
    asked = time.monotonic()

    assert response.status_code == 202, response.json()
    wait_for(
        lambda: AgentRun.objects.filter(pk=run.pk, status=RunStatus.CANCELLED).exists(),
        timeout=10,
        what="the run to end cancelled",
    )
    # Stopped at one of the next chunks, not when the model would have finished (six seconds).
    assert time.monotonic() - asked < 2
    run.refresh_from_db()
    answer = Message.objects.get(pk=run.answer_id)
    text = answer.content["text"]
    assert 3 <= len(text.split()) < len(WORDS) - 10
    assert " ".join(WORDS).startswith(text.strip())
    assert answer.metadata["stopped"] is True
    events = events_after(channel=run_channel(run.pk))
    assert [event.type for event in events][-2:] == ["message", "done"]
    assert events[-1].data["status"] == "cancelled"
    assert events[-2].data["text"] == text
    # The worker closed the model's stream: the rest of the answer was never generated.
    time.sleep(1)
    assert len(worker_model.text_sent) < len(WORDS) - 10

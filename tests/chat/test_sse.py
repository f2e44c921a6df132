"""Run events over SSE through a real ASGI server (uvicorn) and Redis, on the test database."""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import httpx
import pytest
from django.test import Client
from django.utils import timezone

from apps.chat.events import RunEvents
from apps.chat.models import AgentRun, Message, RunStatus
from apps.chat.services import chat_start, run_execute
from apps.core.events import events_after, run_channel
from apps.llm.types import LLMResponse
from tests.support.fixtures import HEARTBEAT_SECONDS
from tests.support.questions import W2_QUESTION
from tests.support.sse_client import Received, parse_sse
from tests.support.tokens import api_token
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def token(user) -> str:
    return api_token(user)


def read_stream(response: httpx.Response) -> list[Received]:
    received = []
    for item in parse_sse(response.iter_lines()):
        received.append(item)
        if item.type in ("done", "error"):
            break
    return received


def get_events(server, run_id, *, token, headers=None, params=None) -> list[Received]:
    with httpx.stream(
        "GET",
        f"{server.url}/api/runs/{run_id}/events",
        params=params,
        timeout=15,
        headers={"Authorization": f"Token {token}", **(headers or {})},
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return read_stream(response)


def events_only(received: list[Received]) -> list[tuple[str | None, str, object]]:
    return [(item.id, item.type, item.data) for item in received if item.type != "comment"]


@contextmanager
def post_question_for_a_stream(server, folder, *, token) -> Iterator[httpx.Response]:
    """POST the question with `Accept: text/event-stream`: the run's events come back on the response."""
    with httpx.stream(
        "POST",
        f"{server.url}/api/folders/{folder.pk}/chat",
        json={"message": W2_QUESTION},
        headers={"Authorization": f"Token {token}", "Accept": "text/event-stream"},
        timeout=30,
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        yield response


def finished_run(library, scripted):
    scripted.push(LLMResponse(text="Federal tax withheld was 12,300 dollars [1]."))
    run = run_execute(run_id=chat_start(user=library.folder.owner, folder=library.folder, text=W2_QUESTION).pk)
    stored = events_after(channel=run_channel(run.pk))
    return run, [(event.id, event.type, event.data) for event in stored]


def test_late_client_gets_every_event_once_in_order_and_the_stream_ends(asgi_server, library, scripted, token):
    run, stored = finished_run(library, scripted)

    received = events_only(get_events(asgi_server, run.pk, token=token))

    assert received == stored
    assert received[-1][1] == "done"


def test_reconnect_with_last_event_id_gets_the_rest_exactly_once(asgi_server, library, scripted, token):
    run, stored = finished_run(library, scripted)
    seen = stored[2][0]

    by_header = events_only(get_events(asgi_server, run.pk, token=token, headers={"Last-Event-ID": seen}))
    by_query = events_only(get_events(asgi_server, run.pk, token=token, params={"last_event_id": seen}))

    assert by_header == by_query == stored[3:]


def test_a_connected_client_follows_live_events(asgi_server, library, token):
    run = chat_start(user=library.folder.owner, folder=library.folder, text=W2_QUESTION)
    connected = threading.Event()

    def listen() -> list[Received]:
        with httpx.stream(
            "GET",
            f"{asgi_server.url}/api/runs/{run.pk}/events",
            timeout=15,
            headers={"Authorization": f"Token {token}"},
        ) as response:
            connected.set()
            return read_stream(response)

    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(listen)
        assert connected.wait(10)
        events = RunEvents(run_id=run.pk)
        published = [events.status("searching")]
        time.sleep(0.1)
        published += [events.emit("text_delta", {"text": f"word{i} "}) for i in range(5)]
        time.sleep(0.1)
        published.append(events.emit("done", {"run_id": str(run.pk)}))
        received = future.result(timeout=15)

    assert events_only(received) == [(e.id, e.type, e.data) for e in published]


def test_heartbeat_comments_while_idle_then_the_stream_ends_after_done(asgi_server, library, token):
    run = chat_start(user=library.folder.owner, folder=library.folder, text=W2_QUESTION)

    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(get_events, asgi_server, run.pk, token=token)
        time.sleep(HEARTBEAT_SECONDS * 4)
        RunEvents(run_id=run.pk).emit("error", {"run_id": str(run.pk), "message": "stopped"})
        received = future.result(timeout=15)

    pings = [item for item in received if item.type == "comment" and item.data == "ping"]
    assert len(pings) >= 2
    assert received[-1].type == "error"


def test_a_finished_run_whose_log_expired_still_ends(asgi_server, library, token):
    run = chat_start(user=library.folder.owner, folder=library.folder, text=W2_QUESTION)
    AgentRun.objects.filter(pk=run.pk).update(
        status=RunStatus.COMPLETED, finished_at=timezone.now() - dt.timedelta(minutes=5)
    )

    received = get_events(asgi_server, run.pk, token=token)

    assert [(item.type, item.id) for item in received if item.type != "comment"] == [("done", None)]


def test_a_cancelled_run_whose_log_expired_ends_saying_so(asgi_server, library, token):
    run = chat_start(user=library.folder.owner, folder=library.folder, text=W2_QUESTION)
    AgentRun.objects.filter(pk=run.pk).update(
        status=RunStatus.CANCELLED, finished_at=timezone.now() - dt.timedelta(minutes=5)
    )

    received = [item for item in get_events(asgi_server, run.pk, token=token) if item.type != "comment"]

    assert [(item.type, item.data["status"]) for item in received] == [("done", "cancelled")]


def test_another_users_run_is_404_and_bad_requests_are_rejected(asgi_server, library, other_user, token):
    run = chat_start(user=library.folder.owner, folder=library.folder, text=W2_QUESTION)
    url = f"{asgi_server.url}/api/runs/{run.pk}/events"
    theirs = {"Authorization": f"Token {api_token(other_user)}"}
    mine = {"Authorization": f"Token {token}"}

    assert httpx.get(url, headers=theirs).status_code == 404
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers={"Authorization": "Token not-a-token"}).status_code == 401
    for bad in ("abc", "1-2-3", "'; DROP", "99999999999999999999999-0"):
        response = httpx.get(url, headers={**mine, "Last-Event-ID": bad})
        assert response.status_code == 400 and "Last-Event-ID" in response.json()["detail"]
    assert httpx.get(url, headers=mine, params={"last_event_id": "x"}).status_code == 400
    assert httpx.get(f"{asgi_server.url}/api/runs/not-a-uuid/events", headers=mine).status_code == 404


def test_session_authentication_works_on_the_async_view(asgi_server, library, scripted, user):
    run, stored = finished_run(library, scripted)
    browser = Client()
    browser.force_login(user)
    cookies = {"sessionid": browser.cookies["sessionid"].value}

    with httpx.stream("GET", f"{asgi_server.url}/api/runs/{run.pk}/events", cookies=cookies, timeout=15) as response:
        assert response.status_code == 200
        assert events_only(read_stream(response)) == stored


def test_post_with_accept_event_stream_streams_the_run(asgi_server, library, token):
    with post_question_for_a_stream(asgi_server, library.folder, token=token) as response:
        run_id = response.headers["x-run-id"]
        received = events_only(read_stream(response))

    types = [event_type for _, event_type, _ in received]
    assert types[:2] == ["status", "status"] and types[-2:] == ["message", "done"] and "text_delta" in types
    message = received[-2][2]
    assert "12,300" in message["text"]
    assert message["citations"][0]["path"] == "finance/W2_2024.pdf"
    run = AgentRun.objects.get(pk=run_id)
    assert run.status == RunStatus.COMPLETED and run.answer_id == message["id"]
    assert received == [(e.id, e.type, e.data) for e in events_after(channel=run_channel(run_id))]


def test_a_client_disconnect_does_not_leave_the_run_hanging(asgi_server, library, token):
    with post_question_for_a_stream(asgi_server, library.folder, token=token) as response:
        run_id = response.headers["x-run-id"]
        first = next(parse_sse(response.iter_lines()))
    assert first.type == "status"

    wait_for(
        lambda: AgentRun.objects.get(pk=run_id).status in (RunStatus.COMPLETED, RunStatus.ERROR),
        what="the run to finish after the client left",
        timeout=20,
        interval=0.1,
    )
    assert AgentRun.objects.get(pk=run_id).status == RunStatus.COMPLETED
    assert events_only(get_events(asgi_server, run_id, token=token))[-1][1] == "done"


@pytest.mark.worker
def test_queued_run_executes_on_a_real_worker_and_streams_on_its_events_url(
    asgi_server, celery_worker_process, library, token
):
    response = httpx.post(
        f"{asgi_server.url}/api/folders/{library.folder.pk}/chat",
        json={"message": W2_QUESTION},
        headers={"Authorization": f"Token {token}"},
    )
    assert response.status_code == 202, response.text
    body = response.json()

    with httpx.stream(
        "GET", f"{asgi_server.url}{body['events_url']}", timeout=60, headers={"Authorization": f"Token {token}"}
    ) as stream:
        received = events_only(read_stream(stream))

    assert [event_type for _, event_type, _ in received][-2:] == ["message", "done"]
    answer = Message.objects.get(pk=received[-2][2]["id"])
    assert answer.conversation_id == body["conversation_id"]
    assert answer.content["citations"][0]["path"] == "finance/W2_2024.pdf"

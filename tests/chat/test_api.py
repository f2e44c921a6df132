"""The chat endpoints in-process: validation, ownership, the queued path and conversations."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from rest_framework.throttling import ScopedRateThrottle

from apps.chat.models import AgentRun, Conversation, Message, RunStatus
from apps.chat.services import chat_start, run_execute
from apps.llm.types import LLMResponse
from tests.support.chat_library import make_folder

pytestmark = pytest.mark.django_db


def chat_url(folder) -> str:
    return f"/api/folders/{folder.pk}/chat"


@pytest.fixture
def queued(monkeypatch):
    """Records what would go to Celery once the request commits."""
    sent: list[tuple[str, tuple]] = []
    monkeypatch.setattr("apps.chat.enqueue.execute_run", lambda *args: sent.append(("execute_run", args)))
    monkeypatch.setattr("apps.library.enqueue.sync_folder", lambda *args: sent.append(("sync_folder", args)))
    return sent


def test_post_returns_202_and_queues_the_run_after_commit(
    auth_client, library, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(chat_url(library.folder), {"message": "W-2 wages?"}, format="json")

    assert response.status_code == 202, response.json()
    body = response.json()
    run = AgentRun.objects.get(pk=body["run_id"])
    assert body == {
        "run_id": str(run.pk),
        "conversation_id": run.conversation_id,
        "events_url": f"/api/runs/{run.pk}/events",
    }
    assert run.status == RunStatus.QUEUED and run.mode == "standard"
    assert run.question.content == {"text": "W-2 wages?"}
    assert queued == [("execute_run", (str(run.pk),))]  # the folder was synced just now: no sync


def test_post_continues_an_own_conversation(auth_client, library, queued):
    first = auth_client.post(chat_url(library.folder), {"message": "one"}, format="json").json()

    second = auth_client.post(
        chat_url(library.folder),
        {"message": "two", "conversation_id": first["conversation_id"], "agent_mode": True},
        format="json",
    )

    assert second.status_code == 202
    assert second.json()["conversation_id"] == first["conversation_id"]
    assert AgentRun.objects.get(pk=second.json()["run_id"]).mode == "agent"
    assert Message.objects.filter(conversation_id=first["conversation_id"]).count() == 2


def test_a_stale_folder_is_synced_at_chat_start(auth_client, library, queued, django_capture_on_commit_callbacks):
    library.folder.last_synced_at = timezone.now() - dt.timedelta(seconds=library.folder.sync_interval_seconds + 5)
    library.folder.save()

    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(chat_url(library.folder), {"message": "W-2 wages?"}, format="json")

    assert response.status_code == 202
    assert ("sync_folder", (library.folder.pk,)) in queued


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "message"),
        ({"message": ""}, "message"),
        ({"message": "x" * 8001}, "message"),
        ({"message": "hi", "conversation_id": "abc"}, "conversation_id"),
        ({"message": "hi", "agent_mode": "maybe"}, "agent_mode"),
    ],
)
def test_malformed_bodies_are_400_with_a_message(auth_client, library, payload, field):
    response = auth_client.post(chat_url(library.folder), payload, format="json")

    assert response.status_code == 400
    assert response.json()["detail"] == "Invalid input." and field in response.json()["errors"]


def test_malformed_json_is_400(auth_client, library):
    response = auth_client.post(chat_url(library.folder), "{not json", content_type="application/json")

    assert response.status_code == 400 and "JSON parse error" in response.json()["detail"]


def test_malformed_body_when_streaming_is_400_as_an_error_event(auth_client, library):
    response = auth_client.post(
        chat_url(library.folder), {"message": ""}, format="json", HTTP_ACCEPT="text/event-stream"
    )

    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/event-stream")
    assert response.content.decode().startswith("event: error\ndata: {")


def test_another_users_folder_or_conversation_is_404(auth_client, other_client, other_user, library, queued):
    theirs = chat_start(user=other_user, folder=make_folder(other_user), text="mine")
    mine_elsewhere = chat_start(user=library.folder.owner, folder=make_folder(library.folder.owner, "other"), text="x")

    assert other_client.post(chat_url(library.folder), {"message": "hi"}, format="json").status_code == 404
    for conversation_id in (theirs.conversation_id, mine_elsewhere.conversation_id, 999_999):
        response = auth_client.post(
            chat_url(library.folder), {"message": "hi", "conversation_id": conversation_id}, format="json"
        )
        assert response.status_code == 404, conversation_id
    assert auth_client.get(f"/api/conversations/{theirs.conversation_id}").status_code == 404
    assert auth_client.post(f"/api/conversations/{theirs.conversation_id}/archive").status_code == 404
    assert auth_client.get(f"/api/runs/{theirs.pk}").status_code == 404


def test_an_archived_conversation_cannot_continue(auth_client, library, queued):
    run = chat_start(user=library.folder.owner, folder=library.folder, text="one")

    archived = auth_client.post(f"/api/conversations/{run.conversation_id}/archive")
    response = auth_client.post(
        chat_url(library.folder), {"message": "two", "conversation_id": run.conversation_id}, format="json"
    )

    assert archived.status_code == 200 and archived.json()["status"] == "archived"
    assert response.status_code == 409 and "archived" in response.json()["detail"]


def test_conversations_list_own_and_filter_by_folder(auth_client, other_user, library, user):
    here = chat_start(user=user, folder=library.folder, text="about wages")
    elsewhere_folder = make_folder(user, "elsewhere")
    chat_start(user=user, folder=elsewhere_folder, text="elsewhere")
    chat_start(user=other_user, folder=make_folder(other_user), text="not yours")

    everything = auth_client.get("/api/conversations").json()["results"]
    filtered = auth_client.get(f"/api/conversations?folder_id={library.folder.pk}").json()["results"]

    assert {c["folder_id"] for c in everything} == {library.folder.pk, elsewhere_folder.pk}
    assert [(c["id"], c["title"], c["message_count"]) for c in filtered] == [(here.conversation_id, "about wages", 1)]
    assert auth_client.get("/api/conversations?folder_id=x").status_code == 400


def test_conversation_detail_has_messages_with_citations(auth_client, library, scripted, user):
    scripted.push(LLMResponse(text="Total wages were 84,500 dollars [1]."))
    run = run_execute(run_id=chat_start(user=user, folder=library.folder, text="W-2 wages in 2024?").pk)

    body = auth_client.get(f"/api/conversations/{run.conversation_id}").json()

    assert [(m["role"], m["text"]) for m in body["messages"]] == [
        ("user", "W-2 wages in 2024?"),
        ("agent", "Total wages were 84,500 dollars [1]."),
    ]
    (citation,) = body["messages"][1]["citations"]
    assert set(citation) == {"n", "file_id", "file_name", "path", "location", "chunk_id", "snippet", "source_removed"}
    assert citation["source_removed"] is False
    assert body["messages"][1]["metadata"]["model"] == "scripted"
    run_body = auth_client.get(f"/api/runs/{run.pk}").json()
    assert run_body["status"] == "completed" and run_body["answer_id"] == body["messages"][1]["id"]


def test_chat_requires_authentication(api_client, library):
    assert api_client.post(chat_url(library.folder), {"message": "hi"}, format="json").status_code in (401, 403)
    assert api_client.get("/api/conversations").status_code in (401, 403)


def test_chat_post_is_throttled(auth_client, library, queued, monkeypatch):
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"chat": "2/min"})

    codes = [auth_client.post(chat_url(library.folder), {"message": "hi"}, format="json").status_code for _ in range(3)]

    assert codes == [202, 202, 429]
    assert Conversation.objects.filter(folder=library.folder).count() == 2

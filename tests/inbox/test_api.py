"""The inbox conversation endpoints: one conversation per folder continued for 30 minutes, messages
queued (202) or streamed (SSE through a real ASGI server), validation, and owners only."""

from __future__ import annotations

import datetime as dt

import httpx
import pytest
from django.utils import timezone

from apps.chat.inbox_conversations import inbox_conversation_current
from apps.chat.models import AgentRun, Conversation
from apps.library.services import folder_delete
from tests.support.chat_library import add_cited_message
from tests.support.inbox_runs import W2
from tests.support.sse_client import parse_sse
from tests.support.tokens import api_token


@pytest.fixture
def queued_runs(monkeypatch) -> list[str]:
    sent: list[str] = []
    monkeypatch.setattr("apps.chat.enqueue.execute_run", sent.append)
    return sent


def start(client, folder, **body):
    return client.post("/api/inbox/conversations", {"folder_id": folder.pk, **body}, format="json")


@pytest.mark.django_db
def test_the_folders_conversation_continues_for_30_minutes_then_a_new_one_starts(auth_client, sample):
    first = start(auth_client, sample.folder)
    again = start(auth_client, sample.folder)
    Conversation.objects.filter(pk=first.json()["id"]).update(
        last_activity_at=timezone.now() - dt.timedelta(minutes=31)
    )
    later = start(auth_client, sample.folder)

    assert first.status_code == 200 and first.json()["folder_id"] == sample.folder.pk
    assert again.json()["id"] == first.json()["id"]
    assert later.json()["id"] != first.json()["id"]
    assert Conversation.objects.get(pk=first.json()["id"]).status == "completed"


@pytest.mark.django_db
def test_a_message_is_queued_on_the_agent_queue_with_its_events_url(
    auth_client, sample, queued_runs, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = start(auth_client, sample.folder, message="find my W-2")

    assert response.status_code == 202
    body = response.json()
    run = AgentRun.objects.get(pk=body["run_id"])
    assert run.mode == "inbox" and run.status == "queued" and queued_runs == [str(run.pk)]
    assert body["events_url"] == f"/api/runs/{run.pk}/events"
    assert body["message_id"] == run.question_id
    assert [message["text"] for message in body["conversation"]["messages"]] == ["find my W-2"]

    with django_capture_on_commit_callbacks(execute=True):
        seed_shape = auth_client.post(
            f"/api/inbox/conversations/{body['conversation']['id']}/messages",
            {"type": "text", "content": {"text": "and the 1099?"}},
            format="json",
        )
    assert seed_shape.status_code == 202 and len(queued_runs) == 2


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        {},
        {"message": ""},
        {"content": {"text": "   "}},
        {"type": "file", "content": {"path": "x"}},
        {"message": "x" * 8001},
    ],
)
def test_bad_messages_are_400_with_a_message(auth_client, sample, queued_runs, body):
    conversation = start(auth_client, sample.folder).json()

    response = auth_client.post(f"/api/inbox/conversations/{conversation['id']}/messages", body, format="json")

    assert response.status_code == 400
    assert response.json()["detail"] == "Invalid input." and response.json()["errors"]
    assert queued_runs == []


@pytest.mark.django_db
def test_list_detail_and_archive(auth_client, sample, queued_runs):
    conversation = start(auth_client, sample.folder, message="hello").json()["conversation"]

    listed = auth_client.get("/api/inbox/conversations", {"folder_id": sample.folder.pk, "status": "active"}).json()
    detail = auth_client.get(f"/api/inbox/conversations/{conversation['id']}").json()
    archived = auth_client.post(f"/api/inbox/conversations/{conversation['id']}/archive")
    closed = auth_client.post(
        f"/api/inbox/conversations/{conversation['id']}/messages", {"message": "hi"}, format="json"
    )

    assert [item["id"] for item in listed["results"]] == [conversation["id"]]
    assert listed["results"][0]["message_count"] == 1
    assert [message["text"] for message in listed["results"][0]["messages"]] == ["hello"]
    assert detail["messages"][0] | {"created_at": None} == {
        "id": detail["messages"][0]["id"],
        "role": "user",
        "type": "text",
        "text": "hello",
        "content": {"text": "hello"},
        "citations": [],
        "sources_consulted": [],
        "metadata": {},
        "created_at": None,
    }
    assert archived.status_code == 200 and archived.json()["status"] == "archived"
    assert closed.status_code == 409 and closed.json()["detail"] == "This conversation is archived; start a new one."
    assert auth_client.get("/api/inbox/conversations", {"status": "nope"}).status_code == 400
    # Inbox conversations stay out of the folder-chat list.
    assert auth_client.get("/api/conversations").json()["results"] == []


@pytest.mark.django_db
def test_an_answers_sources_are_marked_removed_once_their_file_or_folder_is_gone(auth_client, sample):
    conversation = inbox_conversation_current(folder=sample.folder)
    w2, invoice = sample.file(W2), sample.file("inbox/invoice-INV-20931.txt")
    answer = add_cited_message(conversation_id=conversation.pk, files=[w2, invoice])
    answer.content["sources_consulted"] = answer.content["citations"]
    answer.save(update_fields=["content"])

    def marks() -> list[list[tuple[str, bool]]]:
        detail = auth_client.get(f"/api/inbox/conversations/{conversation.pk}").json()
        (listed,) = auth_client.get("/api/inbox/conversations").json()["results"]
        return [
            [(source["file_name"], source["source_removed"]) for source in body["messages"][-1][key]]
            for body in (detail, listed)
            for key in ("citations", "sources_consulted")
        ]

    assert marks() == [[("W2_2024.pdf", False), ("invoice-INV-20931.txt", False)]] * 4
    w2.delete()  # as a sync does once the file is gone at its source
    assert marks() == [[("W2_2024.pdf", True), ("invoice-INV-20931.txt", False)]] * 4
    # The folder removed: its owner keeps the conversation to read, every source marked removed.
    folder_delete(folder=sample.folder, actor=sample.folder.owner)
    assert marks() == [[("W2_2024.pdf", True), ("invoice-INV-20931.txt", True)]] * 4


@pytest.mark.django_db
def test_another_users_conversation_and_folder_are_404(auth_client, other_client, sample, queued_runs):
    conversation = start(auth_client, sample.folder).json()

    assert other_client.get("/api/inbox/conversations").json()["results"] == []
    assert other_client.get(f"/api/inbox/conversations/{conversation['id']}").status_code == 404
    posted = other_client.post(
        f"/api/inbox/conversations/{conversation['id']}/messages", {"message": "hi"}, format="json"
    )
    assert posted.status_code == 404 and posted.json()["detail"] == "Conversation not found."
    assert other_client.post(f"/api/inbox/conversations/{conversation['id']}/archive").status_code == 404
    assert start(other_client, sample.folder).status_code == 404
    assert queued_runs == []


@pytest.mark.django_db(transaction=True)
def test_a_message_streams_its_run_as_server_sent_events(asgi_server, sample, user):
    token = api_token(user)
    headers = {"Authorization": f"Token {token}"}
    conversation = httpx.post(
        f"{asgi_server.url}/api/inbox/conversations", json={"folder_id": sample.folder.pk}, headers=headers
    ).json()

    received = []
    with httpx.stream(
        "POST",
        f"{asgi_server.url}/api/inbox/conversations/{conversation['id']}/messages",
        json={"message": "find my W-2"},
        headers={**headers, "Accept": "text/event-stream"},
        timeout=30,
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for item in parse_sse(response.iter_lines()):
            received.append(item)
            if item.type in ("done", "error"):
                break

    types = [item.type for item in received if item.type != "comment"]
    assert types[0] == "status" and received[0].data["intent"] == "query"
    assert {"tool_call", "tool_result", "text_delta", "message", "done"} <= set(types)
    messages = [item.data for item in received if item.type == "message"]
    assert [message["type"] for message in messages] == ["search_result", "text"]
    assert messages[0]["content"]["results"]


@pytest.mark.django_db(transaction=True)
def test_a_bad_streamed_request_gets_its_error_as_an_event(asgi_server, sample, user):
    token = api_token(user)
    headers = {"Authorization": f"Token {token}"}
    conversation = httpx.post(
        f"{asgi_server.url}/api/inbox/conversations", json={"folder_id": sample.folder.pk}, headers=headers
    ).json()

    response = httpx.post(
        f"{asgi_server.url}/api/inbox/conversations/{conversation['id']}/messages",
        json={"message": ""},
        headers={**headers, "Accept": "text/event-stream"},
    )

    assert response.status_code == 400 and response.text.startswith("event: error")
    assert "message" in response.text

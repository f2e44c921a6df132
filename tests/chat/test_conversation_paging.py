"""Seed 002's conversation detail with `limit` and `cursor`: pages of messages from the latest back,
for folder chats and inbox conversations alike; without either, the response is as it always was."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.chat.models import Conversation, ConversationKind, Message, MessageRole
from tests.support.chat_library import make_folder

pytestmark = pytest.mark.django_db

DETAIL_KEYS = {
    "id",
    "folder_id",
    "folder_removed",
    "folder_name",
    "title",
    "status",
    "message_count",
    "created_at",
    "last_activity_at",
    "messages",
}


def conversation_of(user, *, kind: str = ConversationKind.CHAT, messages: int = 7) -> Conversation:
    """`messages` turns, alternating question and answer; three share one timestamp, as messages
    written in the same instant would, so only the id orders them."""
    conversation = Conversation.objects.create(owner=user, folder=make_folder(user, name=f"f-{kind}"), kind=kind)
    start = timezone.now() - dt.timedelta(hours=1)
    for index in range(messages):
        role = MessageRole.USER if index % 2 == 0 else MessageRole.AGENT
        message = Message.objects.create(conversation=conversation, role=role, content={"text": f"m{index}"})
        moment = start + dt.timedelta(seconds=min(index, 3))  # m3, m4, m5, m6 share a second
        Message.objects.filter(pk=message.pk).update(created_at=moment)
    return conversation


def texts(body: dict) -> list[str]:
    return [message["text"] for message in body["messages"]]


@pytest.fixture(params=["chat", "inbox"])
def detail(request, user):
    """The detail URL of a conversation of seven messages, m0 ... m6, of either kind."""
    kind = ConversationKind.CHAT if request.param == "chat" else ConversationKind.INBOX
    conversation = conversation_of(user, kind=kind)
    prefix = "/api/conversations" if request.param == "chat" else "/api/inbox/conversations"
    return f"{prefix}/{conversation.pk}"


def test_pages_walk_back_from_the_latest_message_without_gaps_or_repeats(auth_client, detail):
    pages = []
    response = auth_client.get(detail, {"limit": 3})
    while True:
        assert response.status_code == 200, response.json()
        body = response.json()
        pages.append(texts(body))
        if body["next_cursor"] is None:
            break
        response = auth_client.get(detail, {"limit": 3, "cursor": body["next_cursor"]})

    assert pages == [["m4", "m5", "m6"], ["m1", "m2", "m3"], ["m0"]]  # each page oldest first
    assert body["message_count"] == 7


def test_a_message_written_meanwhile_does_not_shift_the_older_pages(auth_client, detail):
    first = auth_client.get(detail, {"limit": 2}).json()
    conversation_id = first["id"]
    Message.objects.create(conversation_id=conversation_id, role=MessageRole.USER, content={"text": "later"})

    older = auth_client.get(detail, {"limit": 2, "cursor": first["next_cursor"]}).json()

    assert texts(first) == ["m5", "m6"] and texts(older) == ["m3", "m4"]
    assert texts(auth_client.get(detail, {"limit": 1}).json()) == ["later"]


def test_a_cursor_alone_pages_by_fifty(auth_client, user):
    conversation = conversation_of(user, messages=53)
    url = f"/api/conversations/{conversation.pk}"
    cursor = auth_client.get(url, {"limit": 2}).json()["next_cursor"]

    body = auth_client.get(url, {"cursor": cursor}).json()

    assert texts(body) == [f"m{index}" for index in range(1, 51)]
    assert texts(auth_client.get(url, {"cursor": body["next_cursor"]}).json()) == ["m0"]


def test_without_limit_or_cursor_the_response_is_unchanged(auth_client, user):
    chat = conversation_of(user, messages=3)

    body = auth_client.get(f"/api/conversations/{chat.pk}").json()

    assert set(body) == DETAIL_KEYS  # no next_cursor: the response before paging existed
    assert texts(body) == ["m0", "m1", "m2"]
    inbox = auth_client.get(f"/api/inbox/conversations/{conversation_of(user, kind='inbox').pk}").json()
    assert "next_cursor" not in inbox and texts(inbox) == [f"m{index}" for index in range(7)]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": "MjAyNS0wMS0wMQ"}, "cursor"),  # base64 of a date without a message id
    ],
)
def test_a_bad_limit_or_cursor_is_400_naming_it(auth_client, detail, query, field):
    response = auth_client.get(detail, query)

    assert response.status_code == 400
    assert response.json()["detail"] == "Invalid input." and field in response.json()["errors"]


def test_an_empty_cursor_starts_from_the_latest(auth_client, detail):
    assert texts(auth_client.get(detail, {"limit": 2, "cursor": ""}).json()) == ["m5", "m6"]


def test_someone_elses_conversation_is_404_whatever_the_paging(other_client, detail):
    assert other_client.get(detail, {"limit": 2}).status_code == 404
    assert other_client.get(detail, {"limit": 0}).status_code == 404  # 404 before any 400

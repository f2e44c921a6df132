"""An inbox reply written as plain text streams through the real SDKs as the model writes it."""

from __future__ import annotations

import time

import pytest

from apps.chat.models import Message
from apps.chat.services import inbox_conversation_current, run_execute
from apps.inbox.services import inbox_message_post
from tests.support.llm_wire_stub import StubToolCall

pytestmark = pytest.mark.django_db(transaction=True)

REPLY = " ".join(["Your 2024 W-2 reports wages of 84,500 dollars [1]."] * 4)


def test_a_plain_text_reply_streams_with_the_found_files_as_cards(sample, sdk, wire_stub):
    wire_stub.reply_text('{"intent": "query", "confidence": 0.92, "params": {"search_query": "W-2"}}')
    wire_stub.reply_tool_calls(StubToolCall(id="call_1", name="search_files", arguments={"query": "W-2 wages"}))
    wire_stub.reply_text(REPLY, first_chunk_delay=0.2, chunk_delay=0.02)  # about 0.9 s of writing
    conversation = inbox_conversation_current(folder=sample.folder)
    run = inbox_message_post(conversation=conversation, text="what does my W-2 say about wages?")
    stamped: list = []

    run = run_execute(run_id=run.pk, on_event=lambda event: stamped.append((time.monotonic(), event)))

    assert run.status == "completed", run.error
    assert all(sent.body.get("stream") is True for sent in wire_stub.requests[1:])  # the agent's turns
    deltas = [(at, event) for at, event in stamped if event.type == "text_delta"]
    assert deltas[0][0] - wire_stub.text_sent[0] < 0.1 and deltas[-1][0] - deltas[0][0] > 0.5
    assert "".join(event.data["text"] for _, event in deltas) == REPLY
    assert Message.objects.get(pk=run.answer_id).content["text"] == REPLY
    cards = Message.objects.get(conversation_id=run.conversation_id, type="search_result", metadata__run_id=str(run.pk))
    assert cards.content["results"]

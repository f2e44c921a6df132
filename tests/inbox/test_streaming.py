"""An inbox reply written as plain text streams through the real SDKs as the model writes it."""

from __future__ import annotations

import time

import pytest

from apps.chat.inbox_conversations import inbox_conversation_current
from apps.chat.models import Message
from apps.chat.services import run_execute
from apps.inbox.services import inbox_message_post
from tests.support.llm_wire_stub import StubToolCall

pytestmark = pytest.mark.django_db(transaction=True)

REPLY = " ".join(["Your 2024 W-2 reports wages of 84,500 dollars [1]."] * 4)


def test_a_plain_text_reply_streams_with_the_found_files_as_cards(sample, sdk, wire_stub):
    wire_stub.reply_text('{"intent": "query", "confidence": 0.92, "params": {"search_query": "W-2"}}')
    wire_stub.reply_tool_calls(StubToolCall(id="call_1", name="search_files", arguments={"query": "W-2 wages"}))
    wire_stub.reply_text(REPLY, first_chunk_delay=0.2, chunk_delay=0.02)  # about 0.9 s of writing
    run, stamped = _ask(sample, "what does my W-2 say about wages?")

    assert run.status == "completed", run.error
    assert all(sent.body.get("stream") is True for sent in wire_stub.requests[1:])  # the agent's turns
    deltas = _deltas(stamped)
    assert deltas[0][0] - wire_stub.text_sent[0] < 0.1 and deltas[-1][0] - deltas[0][0] > 0.5
    assert "".join(event.data["text"] for _, event in deltas) == REPLY
    assert Message.objects.get(pk=run.answer_id).content["text"] == REPLY
    cards = Message.objects.get(conversation_id=run.conversation_id, type="search_result", metadata__run_id=str(run.pk))
    assert cards.content["results"]


# Quotes, a newline and non-ASCII: escape sequences the argument fragments cut through.
CARD_REPLY = " ".join(['Your 2024 W-2 lists "wages" of $84,500 [1] — it\u2019s the form in inbox/.\n'] * 4).strip()


def _ask(sample, text: str) -> tuple:
    """Posts ``text`` to the inbox and runs it here; the run and its events with their arrival times."""
    run = inbox_message_post(conversation=inbox_conversation_current(folder=sample.folder), text=text)
    stamped: list = []
    run = run_execute(run_id=run.pk, on_event=lambda event: stamped.append((time.monotonic(), event)))
    return run, stamped


def _deltas(stamped: list) -> list:
    return [(at, event) for at, event in stamped if event.type == "text_delta"]


def test_a_reply_with_cards_streams_from_the_respond_to_user_arguments(sample, sdk, wire_stub):
    w2 = "inbox/W2_2024.pdf"
    wire_stub.reply_text('{"intent": "query", "confidence": 0.92, "params": {"search_query": "W-2"}}')
    # A tool-call turn that writes text after its call (some compatible servers do): none of it shows.
    wire_stub.reply_tool_calls(
        StubToolCall(id="call_1", name="search_files", arguments={"query": "W-2 wages"}), trailing_text=" stray"
    )
    wire_stub.reply_tool_calls(
        StubToolCall(id="call_2", name="respond_to_user", arguments={"message": CARD_REPLY, "files": [w2]}),
        argument_chunk_chars=7,
        first_chunk_delay=0.2,
        chunk_delay=0.01,  # about 0.5 s of writing
    )
    run, stamped = _ask(sample, "show me my W-2 and what it says")

    assert run.status == "completed", run.error
    assert len(wire_stub.requests) == 3  # router and two agent turns: the reply needs no further turn
    deltas = _deltas(stamped)
    assert "".join(event.data["text"] for _, event in deltas) == CARD_REPLY
    # The first words reach the client while the model is still writing the call, the rest as written.
    assert deltas[0][0] < wire_stub.streams_ended[-1] - 0.3
    assert deltas[-1][0] - deltas[0][0] > 0.3
    types = [event.type for _, event in stamped]
    assert "text_reset" not in types
    assert types.index("text_delta") > types.index("tool_result")  # the search turn showed nothing
    assert not any("stray" in event.data["text"] for _, event in deltas)
    assert Message.objects.get(pk=run.answer_id).content["text"] == CARD_REPLY
    cards = Message.objects.get(conversation_id=run.conversation_id, type="search_result", metadata__run_id=str(run.pk))
    assert [card["path"] for card in cards.content["results"]] == [w2]


def test_a_reply_whose_call_fails_is_retracted_and_the_next_turn_answers(sample, sdk, wire_stub):
    wire_stub.reply_text('{"intent": "query", "confidence": 0.92, "params": {"search_query": "W-2"}}')
    wire_stub.reply_tool_calls(
        StubToolCall(
            id="call_1", name="respond_to_user", arguments={"message": "Here it is.", "files": ["inbox/nope.pdf"]}
        ),
        argument_chunk_chars=5,
    )
    wire_stub.reply_text("I could not find that file.")
    run, stamped = _ask(sample, "show me nope.pdf")

    assert run.status == "completed", run.error
    events = [event for _, event in stamped]
    types = [event.type for event in events]
    reset = types.index("text_reset")
    shown_before = "".join(event.data["text"] for event in events[:reset] if event.type == "text_delta")
    assert shown_before == "Here it is."  # streamed from the call, then taken back when the call failed
    assert types.index("tool_result") < reset
    after = "".join(event.data["text"] for event in events[reset:] if event.type == "text_delta")
    assert after == Message.objects.get(pk=run.answer_id).content["text"] == "I could not find that file."


def test_the_organize_agents_summary_streams_from_its_respond_to_user_call(sample, sdk, wire_stub):
    lease = "inbox/lease-renewal-2025.docx"
    summary = "I suggest personal/ for the lease renewal: the guideline puts housing papers there. " * 3
    wire_stub.reply_text('{"intent": "organize", "confidence": 0.9, "params": {}}')
    wire_stub.reply_tool_calls(
        StubToolCall(id="call_1", name="suggest_organization", arguments={"path": lease, "target": "personal"})
    )
    wire_stub.reply_tool_calls(
        StubToolCall(id="call_2", name="respond_to_user", arguments={"message": summary.strip()}),
        argument_chunk_chars=6,
        first_chunk_delay=0.1,
        chunk_delay=0.01,
    )
    run, stamped = _ask(sample, "where should the lease renewal go?")

    assert run.status == "completed", run.error
    deltas = _deltas(stamped)
    assert deltas[0][0] < wire_stub.streams_ended[-1] - 0.3
    assert "".join(event.data["text"] for _, event in deltas) == summary.strip()
    assert Message.objects.get(pk=run.answer_id).content["text"] == summary.strip()
    assert Message.objects.filter(conversation_id=run.conversation_id, type="suggestion").exists()


def test_text_written_before_the_reply_call_is_retracted_when_the_reply_starts(sample, sdk, wire_stub):
    wire_stub.reply_text('{"intent": "query", "confidence": 0.92, "params": {"search_query": "W-2"}}')
    wire_stub.reply_tool_calls(
        StubToolCall(id="call_1", name="respond_to_user", arguments={"message": "Your W-2 is in inbox/."}),
        text="Let me put that together.",
        argument_chunk_chars=4,
    )
    run, stamped = _ask(sample, "where is my W-2?")

    assert run.status == "completed", run.error
    events = [event for _, event in stamped]
    types = [event.type for event in events]
    (reset,) = [index for index, kind in enumerate(types) if kind == "text_reset"]
    before = "".join(event.data["text"] for event in events[:reset] if event.type == "text_delta")
    after = "".join(event.data["text"] for event in events[reset:] if event.type == "text_delta")
    assert before == "Let me put that together."
    assert after == Message.objects.get(pk=run.answer_id).content["text"] == "Your W-2 is in inbox/."

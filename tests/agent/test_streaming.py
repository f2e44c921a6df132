"""Agent mode streams every turn through the real openai and anthropic SDKs (against the wire stub):
the answer's text reaches the run's events as the model writes it, tool-call turns show no text,
and step events carry a timestamp and a human message."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest

from apps.chat.agent.prompts import FINAL_ANSWER_SYSTEM_PROMPT
from apps.chat.models import Message
from apps.chat.services import chat_start, run_execute
from apps.core.events import Event
from apps.llm.scripted import text_response, tool_call_response
from apps.llm.sources import parse_user_prompt
from tests.support.agent_runs import QUESTION, ask
from tests.support.llm_wire_stub import StubToolCall

pytestmark = pytest.mark.django_db(transaction=True)

SLOW_ANSWER = " ".join(["Federal income tax withheld on the 2024 W-2 was 12,300 dollars [1]."] * 5)  # 55 words


def timed_ask(folder, text):
    """`ask`, with the monotonic time each event was published."""
    stamped: list[tuple[float, Event]] = []
    run = chat_start(user=folder.owner, folder=folder, text=text, agent_mode=True)
    run = run_execute(run_id=run.pk, on_event=lambda event: stamped.append((time.monotonic(), event)))
    return run, stamped


def test_the_answer_streams_while_the_model_writes_it(library, sdk, wire_stub):
    wire_stub.reply_tool_calls(StubToolCall("call_s", "search_folder", {"query": "federal income tax withheld"}))
    wire_stub.reply_text(SLOW_ANSWER, first_chunk_delay=0.2, chunk_delay=0.02)  # about 1.3 s of writing

    run, stamped = timed_ask(library.folder, QUESTION)

    assert run.status == "completed" and run.fallback_reason == "", run.error
    assert all(sent.body.get("stream") is True for sent in wire_stub.requests)  # every turn streams
    deltas = [(at, event) for at, event in stamped if event.type == "text_delta"]
    first_at, last_at = deltas[0][0], deltas[-1][0]
    assert first_at - wire_stub.text_sent[0] < 0.1  # the model's first token reached the events at once
    assert last_at - first_at > 0.8  # ... and the rest followed as written, not all at the end
    assert len(deltas) >= 10
    text = "".join(event.data["text"] for _, event in deltas)
    assert text == SLOW_ANSWER == Message.objects.get(pk=run.answer_id).content["text"]
    types = [event.type for _, event in stamped]
    # The tool-call turn streamed nothing: no text before the tool's result, none retracted.
    assert "text_reset" not in types and types.index("text_delta") > types.index("tool_result")


def test_a_preamble_before_tool_calls_is_retracted_and_kept_as_reasoning(library, sdk, wire_stub):
    wire_stub.reply_tool_calls(
        StubToolCall("call_s", "search_folder", {"query": "federal income tax withheld"}),
        text="I will search the folder first.",
    )
    wire_stub.reply_text("It was 12,300 dollars [1].")

    run, stamped = timed_ask(library.folder, QUESTION)

    events = [event for _, event in stamped]
    types = [event.type for event in events]
    reset = types.index("text_reset")
    assert types.index("text_delta") < reset < types.index("tool_call")
    after = "".join(event.data["text"] for event in events[reset:] if event.type == "text_delta")
    assert after == "It was 12,300 dollars [1]." == Message.objects.get(pk=run.answer_id).content["text"]
    call = next(event.data for event in events if event.type == "tool_call")
    assert call["reasoning"] == "I will search the folder first."
    assert run.metrics["text_resets"] == 1


def test_step_events_carry_a_timestamp_and_a_message(library, sdk, wire_stub):
    wire_stub.reply_tool_calls(StubToolCall("call_s", "search_folder", {"query": "federal income tax withheld"}))
    wire_stub.reply_text("It was 12,300 dollars [1].")
    before = dt.datetime.now(dt.UTC)

    _, stamped = timed_ask(library.folder, QUESTION)

    steps = [event.data for _, event in stamped if event.type in ("status", "tool_call", "tool_result")]
    assert steps and all(before <= dt.datetime.fromisoformat(step["timestamp"]) for step in steps)
    messages = [step["message"] for step in steps]
    assert all(message and "\n" not in message for message in messages)
    assert "Calling search_folder (query='federal income tax withheld')" in messages
    assert any(message.startswith("search_folder done: ") for message in messages)
    assert "Step 2: Writing the answer" in messages


def test_a_natural_answer_sees_the_research_trace(library, scripted):
    scripted.push(tool_call_response(("search_folder", {"query": "tax withheld"})), text_response("Done [1]."))

    run, _ = ask(library.folder, QUESTION)

    last_result = json.loads(scripted.requests[1].messages[-1].content)
    assert last_result["research_trace"] == run.metrics["search_trace"]
    assert last_result["research_trace"][0].startswith('search_folder "tax withheld" (hybrid): ')


def test_a_fallback_answers_from_what_the_agent_gathered(library, scripted):
    scripted.push(
        tool_call_response(("search_folder", {"query": "passport renewal appointment"})),
        tool_call_response(("search_folder", {"query": "federal income tax withheld 2024"})),
        text_response(""),  # no answer, and none when forced: standard mode answers with the model
        text_response(""),
        text_response("It was 12,300 dollars [1]."),
    )

    run, events = ask(library.folder, QUESTION)

    assert run.fallback_reason == "the model gave no final answer"
    standard = scripted.requests[-1]
    assert standard.tools == () and standard.system != FINAL_ANSWER_SYSTEM_PROMPT
    sources = parse_user_prompt(standard.messages[-1].content).sources
    texts = [source.text for source in sources]
    # The passport passage only the agent's first search found is there, each chunk once.
    assert any("passport renewal appointment" in text for text in texts)
    assert len(texts) == len(set(texts))
    assert run.metrics["gathered_sources"] == run.metrics["agent"]["passages"] > 0
    fallback = next(e.data for e in events if e.type == "status" and e.data["phase"] == "fallback")
    assert fallback["gathered"] == run.metrics["gathered_sources"]

"""Answers cut at the token limit, and answers that cite nothing, through the real SDKs.

A `length` / `max_tokens` stop marks the answer truncated; `POST /api/messages/{id}/continue`
completes it in place from a new run that shows the model the text so far. An uncited answer is
asked once more for citations, and keeps the passages it was given as sources consulted when it
still cites none; an answer that found nothing says what was searched.
"""

from __future__ import annotations

import pytest

from apps.chat.answering import CITE_AGAIN_PROMPT
from apps.chat.continuation import CONTINUE_PROMPT
from apps.chat.models import AgentRun, Message
from apps.chat.services import chat_start, run_execute
from apps.llm.types import LLMResponse
from apps.search.selectors import chunk_search
from tests.support.llm_wire_stub import StubToolCall
from tests.support.questions import W2_QUESTION

pytestmark = pytest.mark.django_db

CUT = "Federal income tax withheld on the 2024 W-2 was"


def ask(library, *, agent_mode: bool = False):
    run = chat_start(user=library.folder.owner, folder=library.folder, text=W2_QUESTION, agent_mode=agent_mode)
    events: list = []
    return run_execute(run_id=run.pk, on_event=events.append), events


def withheld_n(library) -> int:
    hits = chunk_search(folder_id=library.folder.pk, query=W2_QUESTION, k=8)
    return next(n for n, hit in enumerate(hits, start=1) if "withheld" in hit.text)


def turns(sent) -> list[tuple[str, str]]:
    """(role, text) of each message of a request, in either wire format."""
    out = []
    for message in sent.body["messages"]:
        content = message["content"]
        if not isinstance(content, str):
            content = "".join(block.get("text", "") for block in content if isinstance(block, dict))
        out.append((message["role"], content))
    return out


def test_a_length_stop_marks_the_answer_truncated_and_continue_completes_it(
    library, sdk, settings, wire_stub, auth_client
):
    settings.LLM_MAX_TOKENS_ANSWER = 77
    n = withheld_n(library)
    wire_stub.reply_text(CUT, stop_reason="max_tokens")

    run, _ = ask(library)

    assert wire_stub.requests[0].body["max_tokens"] == 77  # the answer role's own limit
    answer = Message.objects.get(pk=run.answer_id)
    assert answer.metadata["truncated"] is True and answer.content["text"] == CUT
    listed = auth_client.get(f"/api/conversations/{run.conversation_id}").json()["messages"][-1]
    assert listed["metadata"]["truncated"] is True

    wire_stub.reply_text(f" 12,300 dollars [{n}].")
    AgentRun.objects.filter(pk=run.pk).update(language="es")  # as if asked from a Spanish browser
    accepted = auth_client.post(f"/api/messages/{answer.pk}/continue", HTTP_ACCEPT_LANGUAGE="de")
    assert accepted.status_code == 202, accepted.content
    events: list = []
    continued = run_execute(run_id=accepted.json()["run_id"], on_event=events.append)

    assert continued.status == "completed" and continued.answer_id == answer.pk
    assert continued.language == "es"  # goes on in the language it was begun in
    answer.refresh_from_db()
    assert answer.content["text"] == f"{CUT} 12,300 dollars [{n}]."
    assert answer.metadata["truncated"] is False and answer.metadata["continued_by"] == [str(continued.pk)]
    assert [c["path"] for c in answer.content["citations"]] == ["finance/W2_2024.pdf"]
    # The new run saw the text so far, then the instruction to go on; it streamed only the new text.
    *_, (role, so_far), (_, instruction) = turns(wire_stub.requests[1])
    assert (role, so_far, instruction) == ("assistant", CUT, CONTINUE_PROMPT)
    assert "".join(e.data["text"] for e in events if e.type == "text_delta") == f" 12,300 dollars [{n}]."
    assert [e.data["id"] for e in events if e.type == "message"] == [answer.pk]
    assert Message.objects.filter(conversation_id=run.conversation_id).count() == 2  # completed in place


def test_only_a_cut_short_answer_of_ones_own_can_be_continued(library, scripted, auth_client, other_client):
    scripted.push(LLMResponse(text="It was 12,300 dollars [1]."))
    run, _ = ask(library)

    assert auth_client.post(f"/api/messages/{run.answer_id}/continue").status_code == 400
    Message.objects.filter(pk=run.answer_id).update(metadata={"run_id": str(run.pk), "truncated": True})
    assert other_client.post(f"/api/messages/{run.answer_id}/continue").status_code == 404
    assert auth_client.post(f"/api/messages/{run.question_id}/continue").status_code == 404
    assert auth_client.post(f"/api/messages/{run.answer_id}/continue").status_code == 202
    assert auth_client.post(f"/api/messages/{run.answer_id}/continue").status_code == 409  # already under way


def test_an_agent_answer_cut_at_its_limit_is_marked_truncated(library, sdk, settings, wire_stub):
    settings.LLM_MAX_TOKENS_AGENT = 55
    wire_stub.reply_tool_calls(StubToolCall("call_1", "search_folder", {"query": "federal income tax withheld"}))
    wire_stub.reply_text(CUT, stop_reason="max_tokens")

    run, _ = ask(library, agent_mode=True)

    assert {sent.body["max_tokens"] for sent in wire_stub.requests} == {55}
    assert Message.objects.get(pk=run.answer_id).metadata["truncated"] is True


def test_an_uncited_answer_is_asked_once_more_for_citations(library, sdk, wire_stub):
    n = withheld_n(library)
    wire_stub.reply_text("Federal income tax withheld was 12,300 dollars.")
    wire_stub.reply_text(f"Federal income tax withheld was 12,300 dollars [{n}].")

    run, events = ask(library)

    _, again = wire_stub.requests
    assert turns(again)[-2:] == [
        ("assistant", "Federal income tax withheld was 12,300 dollars."),
        ("user", CITE_AGAIN_PROMPT),
    ]
    answer = Message.objects.get(pk=run.answer_id)
    assert answer.content["text"] == f"Federal income tax withheld was 12,300 dollars [{n}]."
    assert [c["n"] for c in answer.content["citations"]] == [n] and "sources_consulted" not in answer.content
    types = [event.type for event in events]
    shown = "".join(e.data["text"] for e in events[types.index("text_reset") :] if e.type == "text_delta")
    assert shown == answer.content["text"] and run.metrics["llm_calls"] == 2


def test_an_answer_that_still_cites_nothing_keeps_the_passages_it_was_given(library, sdk, wire_stub, auth_client):
    wire_stub.reply_text("About twelve thousand dollars.")
    wire_stub.reply_text("Roughly twelve thousand dollars.")

    run, _ = ask(library)

    assert len(wire_stub.requests) == 2
    body = auth_client.get(f"/api/conversations/{run.conversation_id}").json()["messages"][-1]
    assert body["text"] == "About twelve thousand dollars." and body["citations"] == []
    given = chunk_search(folder_id=library.folder.pk, query=W2_QUESTION, k=8)
    assert [(c["n"], c["chunk_id"]) for c in body["sources_consulted"]] == [
        (n, hit.chunk_id) for n, hit in enumerate(given, start=1)
    ]


def test_an_answer_that_found_nothing_says_what_was_searched(library, sdk, wire_stub):
    wire_stub.reply_text("The sources do not mention a tax refund.")

    run, events = ask(library)

    assert len(wire_stub.requests) == 1  # nothing to cite: not asked again
    text = Message.objects.get(pk=run.answer_id).content["text"]
    found_nothing, searched = text.split("\n\n")
    assert found_nothing == "The sources do not mention a tax refund."
    assert searched.startswith(f"Searched this folder for “{W2_QUESTION}” and read ")
    assert "finance/W2_2024.pdf" in searched and "recipes/pancakes.md" in searched
    assert "".join(e.data["text"] for e in events if e.type == "text_delta") == text


@pytest.mark.django_db(transaction=True)  # the agent's tools run in threads of their own
def test_an_uncited_agent_answer_is_asked_once_more_from_what_it_gathered(library, sdk, wire_stub):
    wire_stub.reply_tool_calls(StubToolCall("call_1", "search_folder", {"query": "federal income tax withheld"}))
    wire_stub.reply_text("Federal income tax withheld was 12,300 dollars.")
    wire_stub.reply_text("Federal income tax withheld was 12,300 dollars [1].")

    run, events = ask(library, agent_mode=True)

    *_, again = wire_stub.requests
    assert turns(again)[-1] == ("user", CITE_AGAIN_PROMPT) and "tools" not in again.body
    answer = Message.objects.get(pk=run.answer_id)
    assert answer.content["text"] == "Federal income tax withheld was 12,300 dollars [1]."
    assert [c["n"] for c in answer.content["citations"]] == [1]
    assert run.metrics["citation_retry"] is True
    assert [e.data.get("reason") for e in events if e.type == "text_reset"] == ["citations"]

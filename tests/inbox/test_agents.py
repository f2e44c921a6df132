"""Inbox runs end to end (router, agents, tools, typed messages, events) on a copy of the sample folder,
offline: the extractive provider, no keys. Agent tools run in worker threads with their own
connections, hence transactional tests. test_agents_with_models.py runs the same inbox with models.
"""

from __future__ import annotations

import pytest

from apps.chat.models import Message
from apps.organize.models import OrganizationSuggestion
from apps.organize.services import file_suggest
from tests.support.inbox_runs import LEASE, W2, answer, send, typed

pytestmark = pytest.mark.django_db(transaction=True)


def kinds(events) -> list[str]:
    return [event.type for event in events if event.type != "text_delta"]


def tools_called(events) -> list[str]:
    return [event.data["tool_name"] for event in events if event.type == "tool_call"]


# -- offline (no keys) ---------------------------------------------------------------------------


def test_a_question_goes_to_the_query_agent_and_comes_back_with_file_cards(sample):
    run, events = send(sample.folder, "find my W-2")

    question = Message.objects.get(pk=run.question_id)
    route = question.metadata["route"]
    assert (route["intent"], route["method"]) == ("query", "offline") and route["latency_ms"] > 0
    assert run.metrics["router_ms"] == route["latency_ms"] and run.metrics["agent"] == "query"
    assert tools_called(events) == ["search_files", "respond_to_user"]
    assert kinds(events)[-3:] == ["message", "message", "done"]
    assert events[0].type == "status" and events[0].data["intent"] == "query"
    (cards,) = typed(run, "search_result")
    assert cards.content["query"] == "my W-2" and cards.content["totalFound"] >= len(cards.content["results"])
    paths = [result["path"] for result in cards.content["results"]]
    assert W2 in paths and {"path", "relevance", "matchContext", "fileId", "fileName"} <= set(
        cards.content["results"][0]
    )
    reply = answer(run)
    assert "W-2" in reply.content["text"] and reply.content["citations"]
    assert {citation["path"] for citation in reply.content["citations"]} <= set(paths)
    assert reply.metadata["timings_ms"]["router_ms"] == route["latency_ms"]


def test_how_many_uses_the_stats_tool(sample):
    run, events = send(sample.folder, "how many files do I have?")

    assert tools_called(events) == ["get_stats", "respond_to_user"]
    assert answer(run).content["text"].startswith("This folder has 17 files")


def test_organize_my_inbox_suggests_for_every_waiting_file_then_yes_moves_them(sample):
    run, events = send(sample.folder, "organize my inbox")

    assert tools_called(events)[:2] == ["read_guideline", "get_folder_tree"]
    assert tools_called(events).count("suggest_organization") == 4
    suggestions = typed(run, "suggestion")
    assert {message.content["filePath"]: message.content["targetFolder"] for message in suggestions} == {
        W2: "taxes/",
        "inbox/invoice-INV-20931.txt": "finance/",
        LEASE: "personal/",
        "inbox/receipt-photo.png": "finance/",
    }
    assert kinds(events).count("suggestion") == 4
    assert "Say yes to move them all" in answer(run).content["text"]

    confirmed, confirm_events = send(sample.folder, "yes")

    assert Message.objects.get(pk=confirmed.question_id).metadata["route"]["method"] == "rule"
    assert len(typed(confirmed, "action_result")) == 0  # written by the move service, not tagged with the run
    assert kinds(confirm_events).count("message") == 5  # four action results and the reply
    assert answer(confirmed).content["text"].startswith("Done: moved 4 files.")
    assert (sample.root / "taxes/W2_2024.pdf").is_file() and (
        sample.root / "personal/lease-renewal-2025.docx"
    ).is_file()
    assert not OrganizationSuggestion.objects.filter(status="pending").exists()


def test_no_keeps_the_file_and_the_folder_is_not_offered_again(sample):
    run, _ = send(sample.folder, "organize the lease")
    (suggestion,) = typed(run, "suggestion")
    assert suggestion.content["filePath"] == LEASE and suggestion.content["targetFolder"] == "personal/"

    rejected, _ = send(sample.folder, "no, keep it here")

    assert "OK, I'll leave inbox/lease-renewal-2025.docx where it is" in answer(rejected).content["text"]
    assert OrganizationSuggestion.objects.get(pk=suggestion.content["suggestionId"]).status == "rejected"
    assert (sample.root / LEASE).is_file()
    again = file_suggest(file_id=sample.file(LEASE).pk, on_demand=True)
    assert again.suggestion is None or again.suggestion.target_folder != "personal/"


def test_found_then_move_it_to_a_folder_moves_the_found_file_as_told(sample):
    found, _ = send(sample.folder, "find the lease renewal")
    (cards,) = typed(found, "search_result")
    assert cards.content["results"][0]["path"] == LEASE

    moved, events = send(sample.folder, "move it to personal")

    assert tools_called(events) == []  # an instruction, carried out: no agent weighs it
    assert answer(moved).content["text"] == "Done: moved 1 file."  # the move says where, with its Undo
    assert (sample.root / "personal/lease-renewal-2025.docx").is_file() and not (sample.root / LEASE).exists()
    (result,) = [event.data for event in events if event.type == "message" and event.data["type"] == "action_result"]
    assert result["content"]["moveId"] and "personal/" in result["text"]


def test_greetings_get_a_reply_and_unclear_messages_a_clarifying_question(sample):
    hello, _ = send(sample.folder, "hello")
    unclear, _ = send(sample.folder, "taxes")
    stray_yes, _ = send(sample.folder, "yes")

    assert answer(hello).content["text"].startswith("Hi! I can find files")
    # One message asks, and carries the answers to offer as buttons.
    asked = Message.objects.filter(
        conversation_id=unclear.conversation_id, id__gt=unclear.question_id, id__lt=stray_yes.question_id
    )
    (question,) = asked.filter(role="agent")
    assert question.pk == unclear.answer_id and question.type == "clarification"
    assert question.content["options"] == ["What's in my inbox?", "Organize my inbox"]
    assert question.content["question"].startswith("I'm not sure what you'd like me to do.")
    assert (
        answer(stray_yes).content["text"]
        == "There's nothing waiting for a yes or no right now. What would you like to do?"
    )

"""A conversation past its token budget: the turns that no longer fit are summarised (by the model
through the provider; offline, extractively), stored on the conversation and sent in their place."""

from __future__ import annotations

import pytest

from apps.chat.history import SUMMARY_LEAD, conversation_history_for_prompt
from apps.chat.models import Conversation, Message
from apps.chat.services import chat_start, run_execute
from apps.llm.types import LLMResponse, Role

pytestmark = pytest.mark.django_db

EARLY = "Which invoice was for the boiler service from Heatwise last October?"


def talk(conversation: Conversation, turns: int) -> list[Message]:
    said = []
    for n in range(turns):
        text = EARLY if n == 0 else f"Question {n}: " + "about the lease and the rent again " * 8
        said.append(Message.objects.create(conversation=conversation, role="user", content={"text": text}))
        answer = f"Answer {n}: " + "the lease renews in June and the rent rises " * 8
        said.append(Message.objects.create(conversation=conversation, role="agent", content={"text": answer}))
    return said


def test_turns_past_the_budget_are_summarised_offline_and_lead_the_history(library, settings) -> None:
    settings.CHAT_HISTORY_MAX_TOKENS = 200  # about two of these turns
    conversation = Conversation.objects.create(owner=library.folder.owner, folder=library.folder)
    said = talk(conversation, 4)
    question = Message.objects.create(conversation=conversation, role="user", content={"text": "And the deposit?"})

    history = conversation_history_for_prompt(conversation=conversation, before_message_id=question.pk)

    conversation.refresh_from_db()
    assert history[0].role is Role.USER and history[0].text == f"{SUMMARY_LEAD}\n{conversation.summary}"
    assert conversation.summary.startswith(f"The user asked: {EARLY}\nThe assistant answered: Answer 0:")
    kept = history[1:]
    assert kept and [turn.text for turn in kept] == [message.content["text"].strip() for message in said[-len(kept) :]]
    assert conversation.summary_through == said[-len(kept)].pk - 1
    assert len(kept) < len(said)  # something was dropped, and only that was summarised
    assert "Answer 3" not in conversation.summary

    # Asked again with nothing new dropped: the stored summary is used as it is.
    before = conversation.summary
    assert conversation_history_for_prompt(conversation=conversation, before_message_id=question.pk) == history
    conversation.refresh_from_db()
    assert conversation.summary == before


def test_the_model_writes_the_summary_and_the_answer_prompt_carries_it(library, settings, scripted) -> None:
    settings.CHAT_HISTORY_MAX_TOKENS = 200
    conversation = Conversation.objects.create(owner=library.folder.owner, folder=library.folder)
    talk(conversation, 4)
    scripted.push(
        LLMResponse(text="The user asked about the Heatwise boiler invoice and the lease."),
        LLMResponse(text="The deposit is two months of rent [1]."),
    )

    run = chat_start(user=conversation.owner, folder=library.folder, text="And the deposit?", conversation=conversation)
    run = run_execute(run_id=run.pk, on_event=lambda event: None)

    assert run.status == "completed", run.error
    summary_request, answer_request = scripted.requests
    assert EARLY in summary_request.messages[0].content  # the dropped turns went to the model
    conversation.refresh_from_db()
    assert conversation.summary == "The user asked about the Heatwise boiler invoice and the lease."
    first = answer_request.messages[0]
    assert first.role is Role.USER
    assert first.content.startswith(f"{SUMMARY_LEAD}\n{conversation.summary}")
    assert all(EARLY not in message.content for message in answer_request.messages)


def test_a_conversation_within_its_budget_gets_no_summary(library) -> None:
    conversation = Conversation.objects.create(owner=library.folder.owner, folder=library.folder)
    said = talk(conversation, 1)
    question = Message.objects.create(conversation=conversation, role="user", content={"text": "Thanks"})

    history = conversation_history_for_prompt(conversation=conversation, before_message_id=question.pk)

    assert [turn.text for turn in history] == [message.content["text"].strip() for message in said]
    conversation.refresh_from_db()
    assert (conversation.summary, conversation.summary_through) == ("", None)

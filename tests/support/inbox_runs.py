"""Inbox messages run in-process, and what a run left behind (its answer, its typed messages)."""

from __future__ import annotations

from apps.chat.inbox_conversations import inbox_conversation_current
from apps.chat.models import Message
from apps.chat.services import run_execute
from apps.inbox.services import inbox_message_post

# Files of the sample folder's inbox.
W2 = "inbox/W2_2024.pdf"
LEASE = "inbox/lease-renewal-2025.docx"


def send(folder, text, conversation=None):
    conversation = conversation or inbox_conversation_current(folder=folder)
    run = inbox_message_post(conversation=conversation, text=text)
    events = []
    run = run_execute(run_id=run.pk, on_event=events.append)
    assert run.status == "completed", run.error
    return run, events


def answer(run) -> Message:
    return Message.objects.get(pk=run.answer_id)


def typed(run, type: str) -> list[Message]:
    return list(Message.objects.filter(conversation_id=run.conversation_id, type=type, metadata__run_id=str(run.pk)))

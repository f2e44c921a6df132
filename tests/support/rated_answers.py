"""Answers asked in a folder's chat and rated, as a person does on the chat page: shared by the
feedback API tests and the Evaluate page's browser test."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone

from apps.chat.controls import message_feedback_set
from apps.chat.models import Message
from apps.chat.services import chat_start, run_execute
from apps.library.models import Folder


def asked_and_rated(
    *,
    folder: Folder,
    user: Any,
    question: str,
    rating: str,
    comment: str = "",
    model: str = "",
    mode: str = "",
    rated_days_ago: int = 0,
) -> Message:
    """`question` asked and answered by the offline pipeline, then rated. `model` / `mode`: the
    answer marked as one that model, in that mode, wrote (as its run records it in the metadata);
    `rated_days_ago`: the rating dated that long ago."""
    run = run_execute(run_id=chat_start(user=user, folder=folder, text=question).pk)
    answer = run.answer
    assert answer is not None, run.error
    if model or mode:
        answer.metadata = {**answer.metadata, **({"model": model} if model else {}), **({"mode": mode} if mode else {})}
        answer.save(update_fields=["metadata"])
    feedback = message_feedback_set(user=user, message=answer, rating=rating, comment=comment)
    if rated_days_ago:
        then = timezone.now() - dt.timedelta(days=rated_days_ago)
        type(feedback).objects.filter(pk=feedback.pk).update(created_at=then, updated_at=then)
    return answer

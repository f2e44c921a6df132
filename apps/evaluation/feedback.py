"""Reads of a folder's rated answers (`MessageFeedback`, the thumbs of the chat page): the list, by
rating, mode, model and time, and the counts per week, for the Evaluate page's *Feedback* view.

Who sees what: the counts are the whole folder's, for every member; the rated answers themselves
(question, answer, comment) are the folder's owner's and editors' to read, since they keep the
folder and its evaluation sets and a rating is the asker's word to them. A viewer sees their own
rated answers only: another member's questions stay theirs, as their conversations do.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, QuerySet
from django.db.models.functions import TruncWeek
from django.http import Http404
from django.utils.translation import gettext as _

from apps.chat.models import AgentRun, ConversationKind, FeedbackRating, Message, MessageFeedback, MessageRole
from apps.evaluation.models import EvaluationQuestion
from apps.library.access import FolderAction, folder_role_check
from apps.library.models import Folder, FolderRole

AnyUser = AbstractBaseUser | AnonymousUser
# The counts per week reach back this far at most.
WEEKS_SHOWN = 26


def folder_feedback(*, folder: Folder) -> QuerySet[MessageFeedback]:
    """Every rating of an answer in the folder's chats (not evaluation runs, not the inbox)."""
    return MessageFeedback.objects.filter(
        message__conversation__folder=folder,
        message__conversation__kind=ConversationKind.CHAT,
        message__role=MessageRole.AGENT,
    )


def feedback_filtered(
    feedback: QuerySet[MessageFeedback],
    *,
    rating: str | None = None,
    mode: str | None = None,
    model: str | None = None,
    since: dt.date | None = None,
) -> QuerySet[MessageFeedback]:
    """`since`: rated (or rated again) on or after that day."""
    if rating:
        feedback = feedback.filter(rating=rating)
    if mode:
        feedback = feedback.filter(message__metadata__mode=mode)
    if model:
        feedback = feedback.filter(message__metadata__model=model)
    if since is not None:
        feedback = feedback.filter(updated_at__date__gte=since)
    return feedback


def rated_answers_readable(
    *, feedback: QuerySet[MessageFeedback], user: AnyUser, role: str
) -> QuerySet[MessageFeedback]:
    """The ratings whose answers `user` may read, newest first (see the module)."""
    if role == FolderRole.VIEWER:
        feedback = feedback.filter(message__conversation__owner_id=user.pk)
    return feedback.select_related("message__conversation__owner").order_by("-updated_at", "-id")


def feedback_weeks(*, feedback: QuerySet[MessageFeedback]) -> list[dict[str, Any]]:
    """Ratings counted per week (Monday), mode and model, the latest WEEKS_SHOWN weeks, newest first."""
    rows = (
        feedback.annotate(week=TruncWeek("updated_at"))
        .values("week", "message__metadata__mode", "message__metadata__model", "rating")
        .annotate(count=Count("id"))
        .order_by()
    )
    counted: dict[tuple[dt.date, str, str], dict[str, Any]] = {}
    for row in rows:
        week = row["week"].date()
        mode, model = str(row["message__metadata__mode"] or ""), str(row["message__metadata__model"] or "")
        entry = counted.setdefault(
            (week, mode, model), {"week": week, "mode": mode, "model": model, **dict.fromkeys(FeedbackRating.values, 0)}
        )
        entry[row["rating"]] += row["count"]
    weeks = sorted({week for week, _mode, _model in counted}, reverse=True)[:WEEKS_SHOWN]
    kept = [entry for key, entry in counted.items() if key[0] in weeks]
    return sorted(kept, key=lambda entry: (-entry["week"].toordinal(), entry["mode"], entry["model"]))


def feedback_totals(*, feedback: QuerySet[MessageFeedback]) -> dict[str, int]:
    counts = dict(feedback.values_list("rating").annotate(count=Count("id")).order_by())
    return {rating: counts.get(rating, 0) for rating in FeedbackRating.values}


def feedback_models(*, folder: Folder) -> list[str]:
    """The models that wrote the folder's rated answers, for the page's filter."""
    models = folder_feedback(folder=folder).values_list("message__metadata__model", flat=True).distinct()
    return sorted({str(model) for model in models if model})


def answer_questions(*, message_ids: Iterable[int]) -> dict[int, str]:
    """The question each answer answers (the run that wrote it keeps the asking message)."""
    runs = AgentRun.objects.filter(answer_id__in=list(message_ids), question__isnull=False)
    return {
        answer_id: str((content or {}).get("text", ""))
        for answer_id, content in runs.values_list("answer_id", "question__content")
    }


def answers_in_sets(*, message_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
    """The evaluation sets each answer's question was added to."""
    added: dict[int, list[dict[str, Any]]] = {}
    questions = EvaluationQuestion.objects.filter(source_message_id__in=list(message_ids))
    for message_id, set_id, name in questions.values_list("source_message_id", "set_id", "set__name").order_by(
        "set_id"
    ):
        added.setdefault(message_id, []).append({"id": set_id, "name": name})
    return added


def rated_answer_get(*, user: AnyUser, message_id: int, action: FolderAction = FolderAction.VIEW) -> Message:
    """An answer in a folder's chat that someone rated, when `user` may do `action` to the folder
    (404 without a role, 403 below it)."""
    message = (
        Message.objects.select_related("conversation__folder")
        .filter(
            pk=message_id,
            role=MessageRole.AGENT,
            conversation__kind=ConversationKind.CHAT,
            conversation__folder__isnull=False,
            feedback__isnull=False,
        )
        .first()
    )
    if message is None:
        raise Http404(_("Rated answer not found."))
    try:
        folder_role_check(user=user, folder=message.conversation.live_folder, action=action)
    except Http404:
        raise Http404(_("Rated answer not found.")) from None
    return message

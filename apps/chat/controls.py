"""What the asker does to their answers and conversations: stop, regenerate, rate, rename, delete.

Callers pass objects their selectors found for the asker (`selectors.run_get`, `message_get`,
`conversation_get`), so ownership is settled before anything here runs.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from apps.chat.cancel import run_cancel_flag_raise
from apps.chat.events import RunEvents
from apps.chat.models import (
    FINISHED_RUN_STATUSES,
    AgentRun,
    Conversation,
    ConversationStatus,
    Message,
    MessageFeedback,
    MessageRole,
    RunStatus,
)
from apps.chat.services import run_stop
from apps.core.api import ApplicationError, ConflictError

_IN_PROGRESS = [RunStatus.QUEUED, RunStatus.RUNNING]


def run_cancel(*, run: AgentRun) -> AgentRun:
    """Stop a run. A queued one ends here and now; a running one is asked to stop, and its executor
    ends it `cancelled` at its next text chunk or tool boundary (`apps.chat.cancel`)."""
    # Conditional: a worker claiming the run at this moment either wins (the run is running, and is
    # flagged below) or finds nothing to claim.
    if AgentRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(status=RunStatus.CANCELLED):
        run.refresh_from_db()
        run_stop(run=run, events=RunEvents(run_id=run.pk), text="")
        return run
    run.refresh_from_db(fields=["status"])
    if run.status in FINISHED_RUN_STATUSES:
        raise ConflictError(gettext("This run has already finished (%(status)s).") % {"status": run.status})
    run_cancel_flag_raise(run_id=run.pk)
    return run


@transaction.atomic
def conversation_regenerate(*, user: AbstractBaseUser, conversation: Conversation) -> AgentRun:
    """A new run for the conversation's last question, in the mode, model and language it was asked in.

    The earlier answer stays (the asker may prefer it); the new one follows it. The conversation's
    row is locked, so two regenerations at once make one run, and the other is told why not.
    """
    conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)
    if conversation.status == ConversationStatus.ARCHIVED:
        raise ConflictError(gettext("This conversation is archived; start a new one."))
    last = conversation.runs.order_by("-created_at").first()
    if last is None or last.question_id is None:
        raise ConflictError(gettext("This conversation has no answer to regenerate."))
    if last.status in _IN_PROGRESS:
        raise ConflictError(gettext("An answer is still being written: stop it first."))
    now = timezone.now()
    Conversation.objects.filter(pk=conversation.pk).update(last_activity_at=now)
    return AgentRun.objects.create(
        owner_id=user.pk,
        conversation=conversation,
        question_id=last.question_id,
        mode=last.mode,
        model=last.model,
        language=last.language,
    )


def message_feedback_set(
    *, user: AbstractBaseUser, message: Message, rating: str, comment: str = ""
) -> MessageFeedback:
    """Rate an answer; rating it again replaces the earlier rating."""
    if message.role != MessageRole.AGENT:
        raise ApplicationError(gettext("Only answers can be rated."))
    feedback, _ = MessageFeedback.objects.update_or_create(
        message=message, user_id=user.pk, defaults={"rating": rating, "comment": comment}
    )
    return feedback


def conversation_rename(*, conversation: Conversation, title: str) -> Conversation:
    conversation.title = title
    conversation.save(update_fields=["title", "updated_at"])
    return conversation


@transaction.atomic
def conversation_delete(*, conversation: Conversation) -> None:
    """Delete a conversation with its messages and runs, unless an answer is being written in it:
    its executor would then have nowhere to save it."""
    conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)
    if conversation.runs.filter(status__in=_IN_PROGRESS).exists():
        raise ConflictError(gettext("An answer is still being written in this conversation: stop it first."))
    conversation.delete()

"""Writes of conversations and runs, and the run lifecycle every mode shares.

A run is created with its question (`chat_start`), then executed once (`run_execute`) on the
`agent` queue or in a thread of the web process that streams it. Execution dispatches on the
run's mode through `RUNNERS`; whatever the mode, the answer is persisted and `message` + `done`
(or `error`) published here, so a runner only searches, calls models and emits progress.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connections, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from apps.chat import enqueue
from apps.chat.agent.outcome import AgentProgress, progress_of
from apps.chat.agent.runner import chat_run_agent  # agent mode (issue 7)
from apps.chat.attachments import ImageUpload, attachments_create
from apps.chat.cancel import RunCancelled
from apps.chat.continuation import chat_run_continue, is_continuation
from apps.chat.events import EventCallback, RunEvents
from apps.chat.messages import message_payload, run_steps
from apps.chat.models import (
    AgentRun,
    Conversation,
    ConversationKind,
    ConversationStatus,
    Message,
    MessageRole,
    MessageType,
    RunMode,
    RunStatus,
)
from apps.chat.standard import chat_run_standard
from apps.chat.types import Citation, Runner, RunResult
from apps.core import task_limits
from apps.core.api import ConflictError
from apps.core.logging import redact
from apps.core.metrics import run_observe
from apps.core.preferences import answer_language, language_codes
from apps.core.tracing import tracing_bind
from apps.library.access import folders_visible
from apps.library.models import Folder, FolderStatus
from apps.llm.base import LLMError
from apps.llm.failures import failure_kind, failure_reason
from apps.llm.model_choice import model_choice
from apps.llm.usage_context import usage_context

logger = logging.getLogger(__name__)

# One runner per mode; the inbox app registers its own (`apps.inbox.apps`), so chat never imports it.
RUNNERS: dict[str, Runner] = {
    RunMode.STANDARD: chat_run_standard,
    RunMode.AGENT: chat_run_agent,  # issue 7
}
TITLE_CHARS = 80
# Folders busy with their own indexing or waiting for the user are never synced from a chat.
_NO_SYNC_STATUSES = {FolderStatus.PENDING, FolderStatus.INDEXING, FolderStatus.SYNCING, FolderStatus.NEEDS_REAUTH}


@transaction.atomic
def chat_start(
    *,
    user: AbstractBaseUser,
    folder: Folder,
    text: str,
    conversation: Conversation | None = None,
    agent_mode: bool = False,
    max_iterations: int | None = None,
    model: str = "",
    images: Sequence[ImageUpload] = (),
    language: str = "",
) -> AgentRun:
    """Persist the question (with its checked `images`) and a queued run; the caller decides
    where the run executes.

    `max_iterations` (agent mode) asks for fewer rounds of tool calls than the setting, never more.
    `model`: one of LLM_MODELS_ALLOWED (the caller checked it) for every call of the run.
    `language`: the asker's (`apps.core.preferences.answer_language`), for what the worker writes;
    "" without a request.
    """
    if conversation is None:
        conversation = Conversation.objects.create(
            owner_id=user.pk, folder=folder, kind=ConversationKind.CHAT, title=" ".join(text.split())[:TITLE_CHARS]
        )
    elif conversation.status == ConversationStatus.ARCHIVED:
        raise ConflictError(_("This conversation is archived; start a new one."))
    question = Message.objects.create(conversation=conversation, role=MessageRole.USER, content={"text": text})
    attachments_create(message=question, images=images)
    Conversation.objects.filter(pk=conversation.pk).update(last_activity_at=timezone.now())
    run = AgentRun.objects.create(
        owner_id=user.pk,
        conversation=conversation,
        question=question,
        mode=RunMode.AGENT if agent_mode else RunMode.STANDARD,
        max_iterations=min(max_iterations, settings.AGENT_MAX_ITERATIONS) if agent_mode and max_iterations else None,
        model=model,
        language=language,
    )
    folder_sync_if_stale(folder=folder)
    return run


def folder_sync_if_stale(*, folder: Folder) -> bool:
    """Queue a sync (not awaited: this answer uses the index as it is) when the folder is due."""
    from apps.library.services import folder_sync_enqueue

    if folder.status in _NO_SYNC_STATUSES or folder.sync_started_at is not None:
        return False
    due = timezone.now() - dt.timedelta(seconds=folder.sync_interval_seconds)
    if folder.last_synced_at is not None and folder.last_synced_at > due:
        return False
    folder_sync_enqueue(folder=folder)
    return True


def run_enqueue(*, run: AgentRun) -> None:
    # The request's span may have ended when the commit comes: the task's trace continues it anyway.
    transaction.on_commit(tracing_bind(lambda: enqueue.execute_run(str(run.pk))))


def run_start_thread(*, run: AgentRun) -> None:
    """Execute in a thread of this process, for a response that streams the run itself.

    The thread outlives a disconnecting client, so the answer is still saved and replayable.
    """

    def target() -> None:
        try:
            run_execute(run_id=run.pk)
        finally:
            connections.close_all()

    traced = tracing_bind(target)  # a new thread starts outside the request's trace
    transaction.on_commit(lambda: threading.Thread(target=traced, name=f"run-{run.pk}").start())


def run_execute(*, run_id: uuid.UUID | str, on_event: EventCallback | None = None) -> AgentRun:
    """Run a queued run to its end; a no-op for a finished one (redelivered tasks, cancelled runs).

    Its fixed sentences (a failure's, the offline answerer's, the steps') are in the language it was
    asked in (`AgentRun.language`): a worker or a thread has no request to read it from. A run
    without one (no request made it) is in its owner's choice, else LANGUAGE_CODE.
    """
    language, owner_id = AgentRun.objects.filter(pk=run_id).values_list("language", "owner_id").first() or ("", None)
    with translation.override(language if language in language_codes() else answer_language(user_id=owner_id)):
        return _run_execute(run_id=run_id, on_event=on_event)


def _run_execute(*, run_id: uuid.UUID | str, on_event: EventCallback | None) -> AgentRun:
    claimed = AgentRun.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, started_at=timezone.now()
    )
    run = AgentRun.objects.select_related("conversation", "question", "owner").get(pk=run_id)
    events = RunEvents(run_id=run.pk, on_event=on_event)
    if not claimed:
        if run.status == RunStatus.RUNNING:
            # Delivered again after its worker died mid-run: what it streamed cannot be resumed.
            run_fail(
                run=run, events=events, message=_("The run was interrupted. Please ask again."), detail="redelivered"
            )
        return run
    # Queued runs wait: the asker may have lost the folder (a revoked share) since asking.
    folder_id = run.conversation.folder_id  # None: the folder was removed
    if folder_id is None or not folders_visible(user=run.owner).filter(pk=folder_id).exists():
        run_fail(run=run, events=events, message=_("This folder is no longer available to you."), detail="no access")
        return run
    started = time.perf_counter()
    runner = chat_run_continue if is_continuation(run) else RUNNERS.get(run.mode)
    try:
        # Every model call of the run is metered for its owner, folder and run (`apps.llm.usage`),
        # and made with the model its request chose, if any.
        with usage_context(user_id=run.owner_id, folder_id=folder_id, run_id=run.pk), model_choice(run.model):
            result = runner(run=run, events=events) if runner else _fallback(run=run, events=events)
    except RunCancelled as exc:
        run_stop(
            run=run,
            events=events,
            text=events.text_so_far(),
            citations=exc.citations,
            progress=progress_of(exc),
            total_ms=_ms_since(started),
        )
    except Exception as exc:
        if isinstance(exc, LLMError):
            logger.warning("run %s: model failed (%s): %s", run.pk, failure_kind(exc), redact(repr(exc)))
            message = failure_reason(exc)
        else:
            logger.exception("run %s failed", run.pk)
            message = _("Something went wrong while answering.")
        progress, total_ms = progress_of(exc), _ms_since(started)
        detail = redact(repr(exc))  # kept on the run for operators (admin), never shown to its user
        run_fail(run=run, events=events, message=message, detail=detail, progress=progress, total_ms=total_ms)
    else:
        run_complete(run=run, events=events, result=result, total_ms=_ms_since(started))
    return run


def _fallback(*, run: AgentRun, events: RunEvents) -> RunResult:
    reason = f"{run.mode} mode not available"
    events.status("fallback", reason=reason)
    result = chat_run_standard(run=run, events=events)
    return dataclasses.replace(result, fallback_reason=reason)


def run_complete(*, run: AgentRun, events: RunEvents, result: RunResult, total_ms: int) -> Message:
    tokens = result.usage.as_metrics()
    metrics: dict[str, Any] = {**result.metrics, "total_ms": total_ms, "tokens": tokens}
    run.metrics = {**metrics, "model": result.model}
    run.iterations = result.iterations
    run.tool_calls = list(result.tool_calls)
    run.fallback_reason = result.fallback_reason
    metadata = {
        "model": result.model,
        "tokens": tokens,
        "timings_ms": {key: value for key, value in metrics.items() if key.endswith("_ms")},
        **answer_flags(result),
    }
    continues = result.continues_message_id
    return _run_answer(
        run=run,
        events=events,
        status=RunStatus.COMPLETED,
        content=answer_content(result),
        metadata=metadata,
        fields=["metrics", "iterations", "tool_calls", "fallback_reason"],
        message_type=MessageType.CLARIFICATION if result.options else MessageType.TEXT,
        write=None if continues is None else lambda: answer_continued(message_id=continues, run=run, result=result),
    )


def run_stop(
    *,
    run: AgentRun,
    events: RunEvents,
    text: str,
    citations: Sequence[Citation] = (),
    progress: AgentProgress | None = None,
    total_ms: int | None = None,
) -> Message:
    """End a run its owner stopped: the text written so far is its answer, marked as stopped."""
    fields = []
    if progress is not None:
        run.iterations, run.tool_calls, run.metrics = progress.iterations, list(progress.tool_calls), progress.metrics
        fields += ["iterations", "tool_calls", "metrics"]
    if total_ms is not None:
        run.metrics = {**run.metrics, "total_ms": total_ms}
        fields.append("metrics")
    return _run_answer(
        run=run,
        events=events,
        status=RunStatus.CANCELLED,
        content={"text": text, "citations": [citation.as_dict() for citation in citations]},
        metadata={"stopped": True, "timings_ms": {"total_ms": total_ms} if total_ms is not None else {}},
        fields=list(dict.fromkeys(fields)),
    )


def _run_answer(
    *,
    run: AgentRun,
    events: RunEvents,
    status: RunStatus,
    content: dict[str, Any],
    metadata: dict[str, Any],
    fields: list[str],
    message_type: str = MessageType.TEXT,
    write: Callable[[], Message] | None = None,
) -> Message:
    """Save the run's answer and its end, then publish `message` and `done` with the status.

    The answer keeps the run's steps (`content.steps`) and how long the asker waited
    (`metadata.waited_ms`), so a reloaded conversation shows what the live one did. `write`: how
    the answer is saved instead of as a new message (a continuation completes its message).
    """
    now = timezone.now()
    steps = run_steps(run.tool_calls)
    with transaction.atomic():
        answer = (
            write()
            if write is not None
            else Message.objects.create(
                conversation_id=run.conversation_id,
                role=MessageRole.AGENT,
                type=message_type,
                content={**content, **({"steps": steps} if steps else {})},
                metadata={
                    "run_id": str(run.pk),
                    "mode": run.mode,
                    "waited_ms": _waited_ms(run=run, first_text_at=events.first_text_at, finished_at=now),
                    **metadata,
                },
            )
        )
        run.answer = answer
        run.status = status
        run.finished_at = now
        run.save(update_fields=["answer", "status", "finished_at", "updated_at", *fields])
        Conversation.objects.filter(pk=run.conversation_id).update(last_activity_at=now)
    _run_observe(run=run, events=events)
    # Published after commit: a client reacting to `message` can already read it from the API.
    events.emit("message", message_payload(answer))
    events.emit(
        "done",
        {"run_id": str(run.pk), "conversation_id": run.conversation_id, "message_id": answer.pk, "status": status},
    )
    return answer


def _waited_ms(*, run: AgentRun, first_text_at: dt.datetime | None, finished_at: dt.datetime) -> dict[str, int | None]:
    """From the asker's side: in the queue, until the first text reached them, until the answer."""

    def since_asked(moment: dt.datetime | None) -> int | None:
        return round((moment - run.created_at).total_seconds() * 1000) if moment else None

    return {
        "queued": since_asked(run.started_at or finished_at),
        "first_text": since_asked(first_text_at),
        "done": since_asked(finished_at),
    }


def answer_content(result: RunResult) -> dict[str, Any]:
    content: dict[str, Any] = {"text": result.text, "citations": [citation.as_dict() for citation in result.citations]}
    if result.sources_consulted:
        content["sources_consulted"] = [citation.as_dict() for citation in result.sources_consulted]
    if result.options:
        content |= {"question": result.text, "options": list(result.options)}
    return content


def answer_flags(result: RunResult) -> dict[str, Any]:
    """The answer's metadata that the page shows: why it came offline, and whether it was cut short."""
    return {
        **({"fallback_reason": result.fallback_reason} if result.fallback_reason else {}),
        **({"notice": result.notice} if result.notice else {}),
        "truncated": result.truncated,
    }


def answer_continued(*, message_id: int, run: AgentRun, result: RunResult) -> Message:
    """A continuation completes its answer in place: the whole text, and what the new part cites."""
    answer = Message.objects.select_for_update().get(pk=message_id, conversation_id=run.conversation_id)
    content = answer_content(result)
    cited = {citation["n"] for citation in answer.content.get("citations", [])}
    content["citations"] = [
        *answer.content.get("citations", []),
        *(citation for citation in content["citations"] if citation["n"] not in cited),
    ]
    answer.content = content
    answer.metadata = {
        **answer.metadata,
        **answer_flags(result),
        "continued_by": [*answer.metadata.get("continued_by", []), str(run.pk)],
    }
    answer.save(update_fields=["content", "metadata", "updated_at"])
    return answer


def run_fail(
    *,
    run: AgentRun,
    events: RunEvents,
    message: str,
    detail: str,
    progress: AgentProgress | None = None,
    total_ms: int | None = None,
) -> None:
    """Mark the run failed; what an agent loop did before the failure (`progress`) is kept."""
    run.status = RunStatus.ERROR
    run.error = detail[:4000]
    run.finished_at = timezone.now()
    fields = ["status", "error", "finished_at", "updated_at"]
    if progress is not None or total_ms is not None:
        metrics = dict(progress.metrics) if progress is not None else {}
        run.metrics = {**metrics, **({"total_ms": total_ms} if total_ms is not None else {})}
        fields.append("metrics")
    if progress is not None:
        run.iterations = progress.iterations
        run.tool_calls = list(progress.tool_calls)
        fields += ["iterations", "tool_calls"]
    run.save(update_fields=fields)
    _run_observe(run=run, events=events)
    events.emit("error", {"run_id": str(run.pk), "message": message})


def _run_observe(*, run: AgentRun, events: RunEvents) -> None:
    """The asker's waits, as `_waited_ms` keeps them on the answer, into the Prometheus histograms."""
    waited = _waited_ms(run=run, first_text_at=events.first_text_at, finished_at=run.finished_at or timezone.now())
    first_text = waited["first_text"]
    run_observe(
        mode=run.mode,
        status=run.status,
        seconds=(waited["done"] or 0) / 1000,
        first_text_seconds=first_text / 1000 if first_text is not None else None,
    )


# A run still `running` after this long has lost its executor: a worker past its hard time limit
# or a web process that died mid-stream.
STALE_RUN_SECONDS = task_limits.AGENT_RUN.hard


def runs_fail_stale(*, older_than_seconds: float = STALE_RUN_SECONDS) -> int:
    """Mark runs stuck in `running` as `error` and tell their listeners; returns how many."""
    cutoff = timezone.now() - dt.timedelta(seconds=older_than_seconds)
    failed = 0
    for run_id in AgentRun.objects.filter(status=RunStatus.RUNNING, started_at__lt=cutoff).values_list("pk", flat=True):
        # Conditional update: a run that finishes meanwhile is left alone.
        updated = AgentRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
            status=RunStatus.ERROR, error="stale: no progress past the run time limit", finished_at=timezone.now()
        )
        if updated:
            failed += 1
            RunEvents(run_id=run_id).emit(
                "error", {"run_id": str(run_id), "message": "The run was interrupted. Please ask again."}
            )
    return failed


def conversation_archive(*, conversation: Conversation) -> Conversation:
    conversation.status = ConversationStatus.ARCHIVED
    conversation.save(update_fields=["status", "updated_at"])
    return conversation


def _ms_since(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)

"""An evaluation run, executed once on the agent queue: every question asked as a chat asks it.

Each question is a chat run of its own (`chat_start` + `run_execute`, the very pipeline a person's
question goes through, in the run's mode and with its model), in a conversation of kind `eval`
that no sidebar lists, so its answer is found, written, cited and metered as any other. The run
reads the saved answer back, scores it (`scoring`), and sums the model usage recorded for that
chat run. Progress and the end go to the folder's event stream (`evaluation.progress`,
`evaluation.finished`); at the end the run is compared with the set's previous done run.
"""

from __future__ import annotations

import logging
import time
import uuid
from decimal import Decimal
from typing import Any

import redis
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Sum
from django.utils import timezone

from apps.chat.answering import says_found_nothing
from apps.chat.events import EventCallback
from apps.chat.models import AgentRun, Conversation, ConversationKind, RunStatus
from apps.chat.services import TITLE_CHARS, chat_start, run_execute
from apps.core import task_limits
from apps.core.events import Event, folder_channel, publish_event
from apps.core.metrics import evaluation_run_observe
from apps.evaluation.models import (
    EvaluationMode,
    EvaluationQuestion,
    EvaluationResult,
    EvaluationRun,
    EvaluationRunStatus,
)
from apps.evaluation.scoring import ResultFigures, answer_scored, cited_paths, metrics_dropped, run_metrics
from apps.evaluation.selectors import folder_index_state, previous_done_run
from apps.library.access import folders_visible
from apps.llm.factory import get_llm
from apps.llm.model_choice import model_choice
from apps.llm.models import UsageRecord

logger = logging.getLogger(__name__)

PROGRESS_EVENT = "evaluation.progress"
FINISHED_EVENT = "evaluation.finished"
# The run takes no new question once one more might not end before the task's soft time limit.
QUESTIONS_WINDOW_SECONDS = (task_limits.EVALUATION_RUN.soft or task_limits.EVALUATION_RUN.hard) - (
    task_limits.AGENT_RUN.hard
)


class RunStopped(Exception):
    """The run cannot go on; the message says why, for the person who started it."""


def evaluation_run_execute(*, run_id: uuid.UUID | str) -> EvaluationRun | None:
    """Run a queued run to its end; a no-op for a finished one. Claimed by one conditional UPDATE,
    so a task delivered twice runs it once; delivered again while `running`, its first worker died
    mid-run, and it ends failed (what was answered is kept)."""
    run = EvaluationRun.objects.select_related("set__folder", "created_by").filter(pk=run_id).first()
    if run is None:
        return None  # its set was deleted while it waited
    configuration = run_configuration(run=run)
    claimed = EvaluationRun.objects.filter(pk=run.pk, status=EvaluationRunStatus.QUEUED).update(
        status=EvaluationRunStatus.RUNNING, started_at=timezone.now(), configuration=configuration
    )
    if not claimed:
        if run.status == EvaluationRunStatus.RUNNING:
            _fail(run=run, message="Interrupted: the worker running it stopped. Run the set again.")
        return run
    run.refresh_from_db()
    try:
        figures = _questions_asked(run=run)
    except RunStopped as exc:
        _fail(run=run, message=str(exc))
    except Exception:
        logger.exception("evaluation run %s failed", run.pk)
        _fail(run=run, message="Something went wrong while running the set.")
    else:
        _finish(run=run, figures=figures)
    return run


def run_configuration(*, run: EvaluationRun) -> dict[str, Any]:
    """What answers this run, as the worker that executes it is configured: the history shows
    which settings each run used, so a changed score can be traced to a changed setting."""
    agent = run.mode == EvaluationMode.AGENT
    with model_choice(run.model):
        model = get_llm("agent" if agent and settings.AGENT_MODE_ENABLED else "answer").model
    folder = run.set.folder
    return {
        "mode": run.mode,
        "agent_mode_enabled": settings.AGENT_MODE_ENABLED,
        "provider": settings.LLM_PROVIDER,
        "model": model,
        "model_chosen": run.model,
        "search": {
            "chat_search_k": settings.CHAT_SEARCH_K,
            "rrf_k": settings.SEARCH_RRF_K,
            "embedding_provider": settings.EMBEDDING_PROVIDER,
            "language": folder.language,
            "exclude_patterns": folder.exclude_patterns,
            **folder_index_state(folder_id=folder.pk),
        },
        **({"agent": {"max_iterations": settings.AGENT_MAX_ITERATIONS}} if agent else {}),
        "regression_margin": run.set.regression_margin,
    }


def _questions_asked(*, run: EvaluationRun) -> list[ResultFigures]:
    user = run.created_by
    if user is None:
        raise RunStopped("The person who started this run no longer has an account.")
    if not folders_visible(user=user).filter(pk=run.set.folder_id).exists():
        raise RunStopped("The person who started this run no longer has a role on this folder.")
    questions = list(run.set.questions.order_by("position"))
    total = len(questions)
    deadline = time.monotonic() + QUESTIONS_WINDOW_SECONDS
    _announce(run=run, type=PROGRESS_EVENT, data={"done": 0, "total": total})
    figures = []
    for done, question in enumerate(questions, start=1):
        if time.monotonic() > deadline:
            raise RunStopped(f"Stopped at its time limit after {done - 1} of {total} questions.")
        figures.append(_asked(run=run, question=question, user=user))
        EvaluationRun.objects.filter(pk=run.pk).update(questions_done=done)
        _announce(run=run, type=PROGRESS_EVENT, data={"done": done, "total": total})
    return figures


def _asked(*, run: EvaluationRun, question: EvaluationQuestion, user: AbstractBaseUser) -> ResultFigures:
    """One question, asked by `user` and answered as a chat run; its result saved and returned scored."""
    folder = run.set.folder
    conversation = Conversation.objects.create(
        owner_id=user.pk, folder=folder, kind=ConversationKind.EVALUATION, title=question.question[:TITLE_CHARS]
    )
    chat_run = chat_start(
        user=user,
        folder=folder,
        text=question.question,
        conversation=conversation,
        agent_mode=run.mode == EvaluationMode.AGENT,
        model=run.model,
    )
    failures: list[str] = []
    started = time.perf_counter()
    chat_run = run_execute(run_id=chat_run.pk, on_event=_failures_into(failures))
    duration_ms = round((time.perf_counter() - started) * 1000)
    content = chat_run.answer.content if chat_run.answer is not None else {}
    text = str(content.get("text", ""))
    citations = content.get("citations") or []
    scored = answer_scored(
        text=text,
        cited_files=cited_paths(citations),
        expected_files=question.expected_files,
        expected_facts=question.expected_facts,
        found_nothing=chat_run.status != RunStatus.COMPLETED or (not citations and says_found_nothing(text)),
    )
    tokens, cost = _usage_of(chat_run)
    EvaluationResult.objects.create(
        run=run,
        question=question,
        chat_run=chat_run,
        answer=text,
        cited_files=scored.cited_files,
        hit_rank=scored.hit_rank,
        facts_found=scored.facts_found,
        answered=scored.answered,
        duration_ms=duration_ms,
        tokens=tokens,
        cost=cost,
        error="" if chat_run.status == RunStatus.COMPLETED else (failures[-1:] or ["The answer was not finished."])[0],
    )
    return ResultFigures(
        expected_files=question.expected_files,
        expected_facts=question.expected_facts,
        scored=scored,
        duration_ms=duration_ms,
        tokens=tokens,
        cost=cost,
    )


def _failures_into(failures: list[str]) -> EventCallback:
    """The chat run's `error` event says, in words a person reads, why it ended without an answer."""

    def on_event(event: Event) -> None:
        if event.type == "error":
            failures.append(str(event.data.get("message", "")))

    return on_event


def _usage_of(chat_run: AgentRun) -> tuple[int, Decimal]:
    """Tokens (input + output) and cost of the model calls metered for the chat run (`apps.llm.usage`)."""
    usage = UsageRecord.objects.filter(run_id=chat_run.pk).aggregate(
        input=Sum("input_tokens"), output=Sum("output_tokens"), cost=Sum("cost")
    )
    return (usage["input"] or 0) + (usage["output"] or 0), usage["cost"] or Decimal(0)


def _finish(*, run: EvaluationRun, figures: list[ResultFigures]) -> None:
    metrics = run_metrics(figures)
    previous = previous_done_run(run=run)
    dropped = (
        metrics_dropped(previous=previous.metrics, now=metrics, margin=run.set.regression_margin) if previous else {}
    )
    finished = EvaluationRun.objects.filter(pk=run.pk, status=EvaluationRunStatus.RUNNING).update(
        status=EvaluationRunStatus.DONE,
        metrics=metrics,
        regressed=bool(dropped),
        regressed_metrics=dropped,
        compared_with=previous,
        finished_at=timezone.now(),
    )
    if not finished:
        return  # failed meanwhile as stale: that answer stands
    evaluation_run_observe(outcome="regressed" if dropped else "passed")
    _announce(
        run=run,
        type=FINISHED_EVENT,
        data={"status": EvaluationRunStatus.DONE, "metrics": metrics, "regressed": bool(dropped), "dropped": dropped},
    )


def _fail(*, run: EvaluationRun, message: str) -> None:
    EvaluationRun.objects.filter(pk=run.pk).update(
        status=EvaluationRunStatus.FAILED, error=message, finished_at=timezone.now()
    )
    evaluation_run_observe(outcome="failed")
    _announce(run=run, type=FINISHED_EVENT, data={"status": EvaluationRunStatus.FAILED, "error": message})


def _announce(*, run: EvaluationRun, type: str, data: dict[str, Any]) -> None:
    """On the folder's stream, where its pages listen; a lost event costs the page a live update only."""
    folder_id = run.set.folder_id
    body = {"folder_id": folder_id, "set_id": run.set_id, "run_id": str(run.pk), **data}
    try:
        publish_event(channel=folder_channel(folder_id), type=type, data=body)
    except redis.RedisError:
        logger.warning("could not publish %s of evaluation run %s", type, run.pk, exc_info=True)

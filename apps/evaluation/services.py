"""Writes of evaluation sets and the start of their runs (`execution` runs them on the agent queue).

Composable for what builds sets from elsewhere (a generated set, a rated answer): each takes plain
`QuestionSpec`s and checks their files against the folder the same way.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.chat.models import Conversation, Message
from apps.core import task_limits
from apps.core.api import ApplicationError, ConflictError
from apps.evaluation import enqueue
from apps.evaluation.feedback import answer_questions
from apps.evaluation.models import (
    ACTIVE_RUN_STATUSES,
    EvaluationMode,
    EvaluationQuestion,
    EvaluationResult,
    EvaluationRun,
    EvaluationRunStatus,
    EvaluationSet,
    EvaluationTrigger,
)
from apps.library.access import FolderAction, folder_ids_allowed
from apps.library.models import Folder
from apps.library.selectors import folder_files_get_by_path
from apps.llm.model_choice import model_allowed

MAX_QUESTIONS = 200
# The set a rated answer's question goes to when none is named: made the first time.
FEEDBACK_SET_NAME = "From feedback"
# A run queued or running this long has lost its task (the whole run's hard time limit).
STALE_RUN_SECONDS = task_limits.EVALUATION_RUN.hard


@dataclass(frozen=True)
class QuestionSpec:
    question: str
    expected_files: Sequence[str] = ()  # none: a question the folder cannot answer
    expected_facts: Sequence[str] = ()


@transaction.atomic
def evaluation_set_create(
    *, folder: Folder, name: str, questions: Sequence[QuestionSpec], user: AbstractBaseUser
) -> EvaluationSet:
    name = " ".join(name.split())
    if not name:
        raise ApplicationError(_("Give the set a name."), extra={"field": "name"})
    if not questions:
        raise ApplicationError(_("A set needs at least one question."), extra={"field": "questions"})
    if len(questions) > MAX_QUESTIONS:
        raise ApplicationError(
            _("A set has at most %(limit)s questions.") % {"limit": MAX_QUESTIONS}, extra={"field": "questions"}
        )
    cleaned = [_question_clean(spec, number=number) for number, spec in enumerate(questions, start=1)]
    _files_check(folder=folder, questions=cleaned)
    evaluation_set = EvaluationSet.objects.create(folder=folder, name=name[:255], created_by_id=user.pk)
    EvaluationQuestion.objects.bulk_create(
        EvaluationQuestion(
            set=evaluation_set,
            position=position,
            question=spec.question,
            expected_files=list(spec.expected_files),
            expected_facts=list(spec.expected_facts),
        )
        for position, spec in enumerate(cleaned, start=1)
    )
    return evaluation_set


def _question_clean(spec: QuestionSpec, *, number: int) -> QuestionSpec:
    question = spec.question.strip()
    if not question:
        raise ApplicationError(_("Question %(number)s is empty.") % {"number": number}, extra={"field": "questions"})
    files = [path.strip().lstrip("/") for path in spec.expected_files if path.strip()]
    facts = [fact.strip() for fact in spec.expected_facts if fact.strip()]
    return QuestionSpec(question=question, expected_files=list(dict.fromkeys(files)), expected_facts=facts)


def _files_check(*, folder: Folder, questions: Sequence[QuestionSpec]) -> None:
    """Every expected file is a file of the folder now; the refusal names the first one that is not."""
    wanted = list(dict.fromkeys(path for spec in questions for path in spec.expected_files))
    present = folder_files_get_by_path(folder_id=folder.pk, paths=wanted)
    for number, spec in enumerate(questions, start=1):
        for path in spec.expected_files:
            if path not in present:
                raise ApplicationError(
                    _("Question %(number)s expects %(path)s, which is not a file of this folder.")
                    % {"number": number, "path": repr(path)},
                    extra={"field": "questions", "missing_file": path},
                )


@transaction.atomic
def evaluation_question_from_answer(
    *,
    message: Message,
    user: AbstractBaseUser,
    expected_file: str,
    expected_facts: Sequence[str] = (),
    set_id: int | None = None,
) -> EvaluationQuestion:
    """A rated answer's question added to set `set_id` of its folder (by default the folder's "From
    feedback" set, made the first time), expecting the file the person marks as the right one
    ("": the folder cannot answer it). Each answer's question goes into a set once."""
    folder = message.conversation.live_folder
    # Serialises two additions to the folder: the second finds the set and the position the first made.
    Folder.objects.select_for_update().filter(pk=folder.pk).first()
    asked = answer_questions(message_ids=[message.pk]).get(message.pk, "")
    if not asked.strip():
        raise ApplicationError(_("The question this answer answers is no longer there."))
    spec = _question_clean(
        QuestionSpec(question=asked, expected_files=[expected_file], expected_facts=expected_facts), number=1
    )
    for path in spec.expected_files:
        if path not in folder_files_get_by_path(folder_id=folder.pk, paths=[path]):
            raise ApplicationError(
                _("%(path)s is not a file of this folder.") % {"path": repr(path)},
                extra={"field": "expected_file", "missing_file": path},
            )
    sets = EvaluationSet.objects.filter(folder=folder)
    if set_id is not None:
        evaluation_set = sets.filter(pk=set_id).first()
        if evaluation_set is None:
            raise ApplicationError(
                _("No evaluation set %(id)s in this answer's folder.") % {"id": set_id}, extra={"field": "set_id"}
            )
    else:
        evaluation_set = sets.filter(name=FEEDBACK_SET_NAME).order_by("created_at").first() or sets.create(
            folder=folder, name=FEEDBACK_SET_NAME, created_by_id=user.pk
        )
    questions = evaluation_set.questions.all()
    if questions.filter(Q(source_message=message) | Q(question=spec.question)).exists():
        raise ConflictError(_("This question is already in the set “%(name)s”.") % {"name": evaluation_set.name})
    if questions.count() >= MAX_QUESTIONS:
        raise ApplicationError(
            _("A set has at most %(limit)s questions.") % {"limit": MAX_QUESTIONS}, extra={"field": "set_id"}
        )
    last = questions.order_by("-position").values_list("position", flat=True).first() or 0
    question = EvaluationQuestion.objects.create(
        set=evaluation_set,
        position=last + 1,
        question=spec.question,
        expected_files=list(spec.expected_files),
        expected_facts=list(spec.expected_facts),
        source_message=message,
    )
    EvaluationSet.objects.filter(pk=evaluation_set.pk).update(updated_at=timezone.now())
    return question


def evaluation_set_update(
    *, evaluation_set: EvaluationSet, name: str | None = None, nightly: bool | None = None, margin: float | None = None
) -> EvaluationSet:
    fields = []
    if name is not None:
        name = " ".join(name.split())
        if not name:
            raise ApplicationError(_("Give the set a name."), extra={"field": "name"})
        evaluation_set.name = name[:255]
        fields.append("name")
    if nightly is not None:
        evaluation_set.nightly = nightly
        fields.append("nightly")
    if margin is not None:
        evaluation_set.regression_margin = margin
        fields.append("regression_margin")
    if fields:
        evaluation_set.save(update_fields=[*fields, "updated_at"])
    return evaluation_set


@transaction.atomic
def evaluation_set_delete(*, evaluation_set: EvaluationSet) -> None:
    """The set, its runs and results, and the hidden conversations its questions were asked in."""
    evaluation_runs_fail_stale(evaluation_set=evaluation_set)
    if evaluation_set.runs.filter(status__in=ACTIVE_RUN_STATUSES).exists():
        raise ConflictError(_("A run of this set is still going; delete the set once it has finished."))
    asked = EvaluationResult.objects.filter(run__set=evaluation_set, chat_run__isnull=False)
    Conversation.objects.filter(pk__in=asked.values("chat_run__conversation_id")).delete()
    evaluation_set.delete()


@transaction.atomic
def evaluation_run_start(
    *,
    evaluation_set: EvaluationSet,
    user: AbstractBaseUser,
    mode: str = EvaluationMode.STANDARD,
    model: str = "",
    trigger: str = EvaluationTrigger.MANUAL,
) -> EvaluationRun:
    """A queued run, executed once this commits; one run of a set at a time (409 otherwise).

    `model`: one of LLM_MODELS_ALLOWED, and `mode` agent only while AGENT_MODE_ENABLED (the caller
    checked both, as chat's endpoint does)."""
    # Serialises two starts of the same set: the second sees the first's run.
    EvaluationSet.objects.select_for_update().filter(pk=evaluation_set.pk).first()
    evaluation_runs_fail_stale(evaluation_set=evaluation_set)
    if evaluation_set.runs.filter(status__in=ACTIVE_RUN_STATUSES).exists():
        raise ConflictError(_("This set is already being run; wait for that run to finish."))
    run = EvaluationRun.objects.create(
        set=evaluation_set,
        mode=mode,
        model=model,
        trigger=trigger,
        created_by_id=user.pk,
        questions_total=evaluation_set.questions.count(),
    )
    _enqueue(run)
    return run


def _enqueue(run: EvaluationRun) -> None:
    transaction.on_commit(lambda: enqueue.execute_evaluation_run(str(run.pk)))


def evaluation_runs_fail_stale(*, evaluation_set: EvaluationSet) -> int:
    """Runs whose task is surely gone (queued or running past the run's hard time limit) fail."""
    cutoff = timezone.now() - dt.timedelta(seconds=STALE_RUN_SECONDS)
    queued = Q(status=EvaluationRunStatus.QUEUED, created_at__lt=cutoff)
    running = Q(status=EvaluationRunStatus.RUNNING, started_at__lt=cutoff)
    return EvaluationRun.objects.filter(queued | running, set=evaluation_set).update(
        status=EvaluationRunStatus.FAILED,
        error="Interrupted: the run did not finish within its time limit.",
        finished_at=timezone.now(),
    )


def evaluation_runs_start_nightly() -> list[EvaluationRun]:
    """Beat, once a night: a run of every set marked nightly that is not running already, in the
    mode and with the model of its latest run, as its creator while they may still edit the
    folder (else as the folder's owner)."""
    started = []
    for evaluation_set in EvaluationSet.objects.filter(nightly=True).select_related("folder__owner", "created_by"):
        latest = evaluation_set.runs.order_by("-created_at").first()
        mode = latest.mode if latest else EvaluationMode.STANDARD
        if mode == EvaluationMode.AGENT and not settings.AGENT_MODE_ENABLED:
            mode = EvaluationMode.STANDARD
        creator = evaluation_set.created_by
        may_edit = (
            creator is not None
            and folder_ids_allowed(user=creator, action=FolderAction.EDIT).filter(pk=evaluation_set.folder_id).exists()
        )
        try:
            run = evaluation_run_start(
                evaluation_set=evaluation_set,
                user=creator if may_edit and creator is not None else evaluation_set.folder.owner,
                mode=mode,
                model=latest.model if latest and model_allowed(latest.model) else "",
                trigger=EvaluationTrigger.NIGHTLY,
            )
        except ConflictError:
            continue  # last night's, or a person's, is still going
        started.append(run)
    return started

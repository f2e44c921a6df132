"""Reads of evaluation sets, runs and results, each through the folder's roles.

A set or run of a folder the caller has no role on is 404, the same as a missing id; a role below
the one an action needs is 403 saying which role would do (`apps.library.access`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.http import Http404
from django.utils.translation import gettext as _

from apps.evaluation.models import EvaluationResult, EvaluationRun, EvaluationRunStatus, EvaluationSet
from apps.library.access import FolderAction, folder_role_check
from apps.library.models import Chunk, File, FileStatus, Folder

AnyUser = AbstractBaseUser | AnonymousUser
# The run history a set's detail shows, newest first.
RUNS_SHOWN = 100


def evaluation_set_get(*, user: AnyUser, set_id: int, action: FolderAction = FolderAction.VIEW) -> EvaluationSet:
    evaluation_set = EvaluationSet.objects.select_related("folder", "created_by").filter(pk=set_id).first()
    if evaluation_set is None:
        raise Http404(_("Evaluation set not found."))
    _role_check(user=user, folder=evaluation_set.folder, action=action, missing=_("Evaluation set not found."))
    return evaluation_set


def evaluation_run_get(*, user: AnyUser, run_id: uuid.UUID) -> EvaluationRun:
    run = EvaluationRun.objects.select_related("set__folder", "created_by").filter(pk=run_id).first()
    if run is None:
        raise Http404(_("Evaluation run not found."))
    _role_check(user=user, folder=run.set.folder, action=FolderAction.VIEW, missing=_("Evaluation run not found."))
    return run


def _role_check(*, user: AnyUser, folder: Folder, action: FolderAction, missing: str) -> None:
    try:
        folder_role_check(user=user, folder=folder, action=action)
    except Http404:
        raise Http404(missing) from None


def folder_evaluation_sets(*, folder: Folder) -> QuerySet[EvaluationSet]:
    """The folder's sets, newest first, with their question count and latest run's id."""
    latest = EvaluationRun.objects.filter(set=OuterRef("pk")).order_by("-created_at").values("pk")[:1]
    return (
        EvaluationSet.objects.filter(folder=folder)
        .select_related("created_by")
        .annotate(question_count=Count("questions"), last_run_id=Subquery(latest))
        .order_by("-created_at", "-id")
    )


def evaluation_runs_by_id(*, run_ids: Iterable[uuid.UUID | None]) -> dict[uuid.UUID, EvaluationRun]:
    wanted = [run_id for run_id in run_ids if run_id is not None]
    return {run.pk: run for run in EvaluationRun.objects.filter(pk__in=wanted).select_related("created_by")}


def evaluation_set_runs(*, evaluation_set: EvaluationSet) -> list[EvaluationRun]:
    return list(evaluation_set.runs.select_related("created_by").order_by("-created_at")[:RUNS_SHOWN])


def evaluation_run_results(*, run: EvaluationRun) -> QuerySet[EvaluationResult]:
    return run.results.select_related("question").order_by("question__position")


def previous_done_run(*, run: EvaluationRun) -> EvaluationRun | None:
    """The set's latest run that finished before this one: the one it is compared with."""
    return (
        EvaluationRun.objects.filter(set_id=run.set_id, status=EvaluationRunStatus.DONE)
        .exclude(pk=run.pk)
        .order_by("-finished_at")
        .first()
    )


def folder_index_state(*, folder_id: int) -> dict[str, Any]:
    """What the folder's index held when a run started: a file excluded or failed since shows here."""
    return {
        "files_indexed": File.objects.filter(folder_id=folder_id, status=FileStatus.INDEXED).count(),
        "chunks": Chunk.objects.filter(folder_id=folder_id).count(),
    }

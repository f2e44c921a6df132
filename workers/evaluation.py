"""Celery tasks of evaluation runs (agent queue): thin wrappers that call the services."""

from __future__ import annotations

from celery import shared_task

from apps.core import task_limits
from workers.options import RELIABLE


@shared_task(name="workers.evaluation.execute_evaluation_run", **RELIABLE, **task_limits.EVALUATION_RUN.options())
def execute_evaluation_run(run_id: str) -> str:
    from apps.evaluation.execution import evaluation_run_execute

    run = evaluation_run_execute(run_id=run_id)
    return f"evaluation run {run_id}: {run.status if run else 'gone'}"


@shared_task(name="workers.evaluation.run_nightly_sets", **RELIABLE, **task_limits.BEAT_SWEEP.options())
def run_nightly_sets() -> int:
    """Beat, once a night: a run of every set marked nightly (none is, unless someone marks it)."""
    from apps.evaluation.services import evaluation_runs_start_nightly

    return len(evaluation_runs_start_nightly())

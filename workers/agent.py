"""Celery tasks for the agent queue: thin wrappers that load by id and call a service."""

from __future__ import annotations

from celery import shared_task

from apps.core import task_limits
from workers.options import RELIABLE


@shared_task(name="workers.agent.execute_run", **RELIABLE, **task_limits.AGENT_RUN.options())
def execute_run(run_id: str) -> None:
    from apps.chat.services import run_execute

    run_execute(run_id=run_id)


@shared_task(name="workers.agent.fail_stale_runs", **RELIABLE, **task_limits.BEAT_SWEEP.options())
def fail_stale_runs() -> int:
    """Beat: runs whose executor died (a streamed run dies with its web process) end as `error`."""
    from apps.chat.services import runs_fail_stale

    return runs_fail_stale()

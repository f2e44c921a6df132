"""Celery tasks for the agent queue: thin wrappers that load by id and call a service."""

from __future__ import annotations

from celery import shared_task

from workers.options import RELIABLE


# Limits above the agent's own total timeout plus a slow model's final answer: they only catch hangs.
@shared_task(name="workers.agent.execute_run", **RELIABLE, time_limit=330, soft_time_limit=300)
def execute_run(run_id: str) -> None:
    from apps.chat.services import run_execute

    run_execute(run_id=run_id)


@shared_task(name="workers.agent.fail_stale_runs", **RELIABLE, time_limit=60, soft_time_limit=50)
def fail_stale_runs() -> int:
    """Beat: runs whose executor died (a streamed run dies with its web process) end as `error`."""
    from apps.chat.services import runs_fail_stale

    return runs_fail_stale()

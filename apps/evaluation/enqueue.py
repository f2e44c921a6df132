"""Evaluation's task, sent by name (``apps/core/enqueue.py`` says why apps never import workers/).

Callers wrap the send in ``transaction.on_commit``.
"""

from __future__ import annotations

from apps.core.enqueue import task_send


def execute_evaluation_run(run_id: str) -> None:
    task_send("workers.evaluation.execute_evaluation_run", args=[run_id])

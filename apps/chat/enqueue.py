"""Chat's task, sent by name (``apps/core/enqueue.py`` says why apps never import workers/).

Callers import the module (``from apps.chat import enqueue``) and wrap the send in
``transaction.on_commit``; a test can put the send aside.
"""

from __future__ import annotations

from apps.core.enqueue import task_send


def execute_run(run_id: str) -> None:
    task_send("workers.agent.execute_run", args=[run_id])

"""Organize's task, sent by name (``apps/core/enqueue.py`` says why apps never import workers/).

Callers import the module (``from apps.organize import enqueue``) and wrap the send in
``transaction.on_commit``; a test can put the send aside.
"""

from __future__ import annotations

from apps.core.enqueue import task_send


def suggest_organization(file_id: int) -> None:
    task_send("workers.organize.suggest_organization", args=[file_id])

"""Sending a Celery task by its name: how every app's enqueue module reaches workers/.

The tasks in workers/ import the services they run; a service that imported its task back would
close a circle. So apps never import workers/: each app's ``enqueue`` module names its tasks and
sends them through ``task_send``. The routes (``apps/core/queues.py``, installed by
config/celery.py) apply to a task sent by name as to one called through its object, and a queue
or priority given here wins over them, as with ``apply_async``.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from celery import current_app
from celery.result import AsyncResult


def task_send(name: str, *, args: Sequence[Any] = (), **options: Any) -> AsyncResult:
    """Queue the task called ``name`` with ``args``; ``options`` as ``apply_async`` takes them
    (``task_id``, ``queue``, ``priority``)."""
    if current_app.conf.task_always_eager:
        # Debugging only (CELERY_TASK_ALWAYS_EAGER), which send_task ignores: the task runs here as
        # apply_async would run it, its module loaded by name as a worker loads it.
        importlib.import_module(name.rpartition(".")[0])
        return current_app.tasks[name].apply(args=tuple(args), **options)
    return current_app.send_task(name, args=list(args), **options)

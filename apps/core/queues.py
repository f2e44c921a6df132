"""Queue names and routing by task name: one place, so operators know what a worker with `-Q x`
consumes. Here in core, not in workers/, because the apps' enqueue modules send tasks by name and
choose queues and priorities (``run_queue``, ``run_priority``); config/celery.py installs the routes,
which apply to a task sent by name (``send_task``) as to one called through its object."""

from __future__ import annotations

import time
from enum import StrEnum
from typing import Any

from kombu import Exchange, Queue


class QueueName(StrEnum):
    INDEXING = "indexing"
    # Listings and small runs (``SMALL_RUN_GROUPS``), on slots of their own: a new folder's
    # files never wait for a big folder's groups, however long each of those takes.
    INDEXING_SMALL = "indexing_small"
    BACKFILL = "backfill"
    SYNC = "sync"
    ORGANIZE = "organize"
    AGENT = "agent"
    DEFAULT = "default"


TASK_QUEUES = tuple(Queue(name.value, Exchange(name.value), routing_key=name.value) for name in QueueName)

# Routed by task name, so by task module: a task's queue follows from where it lives in workers/.
TASK_ROUTES = {
    "workers.indexing.index_folder": {"queue": QueueName.INDEXING_SMALL.value},
    "workers.indexing.*": {"queue": QueueName.INDEXING.value},
    "workers.backfill.*": {"queue": QueueName.BACKFILL.value},
    "workers.sync.*": {"queue": QueueName.SYNC.value},
    "workers.organize.*": {"queue": QueueName.ORGANIZE.value},
    "workers.agent.*": {"queue": QueueName.AGENT.value},
    # Evaluation runs answer questions as chat runs do, on the chat workers.
    "workers.evaluation.*": {"queue": QueueName.AGENT.value},
    "workers.maintenance.*": {"queue": QueueName.DEFAULT.value},
}

# What a worker given every queue consumes: the test workers; the Procfile's and compose's workers
# together (checked by tests/deploy).
ALL_QUEUES: tuple[str, ...] = tuple(name.value for name in QueueName)

# A run of at most this many ``index_files`` groups (about 200 files) goes to INDEXING_SMALL.
SMALL_RUN_GROUPS = 2


def run_queue(groups: int) -> str:
    return (QueueName.INDEXING_SMALL if groups <= SMALL_RUN_GROUPS else QueueName.INDEXING).value


# On Redis, kombu keeps one list per priority step and a worker pops the highest non-empty one
# first (0 is the highest; a task sent without a priority gets 0). Ten steps (settings'
# CELERY_BROKER_TRANSPORT_OPTIONS, which producers and workers share), so the tasks late in a long
# run sink below the first tasks of every run that starts after it (``run_priority``).
PRIORITY_STEPS: tuple[int, ...] = tuple(range(10))


def run_priority(position: int) -> int:
    """The priority of a run's ``position``-th task (0: its first): one step lower each time the
    position doubles, so a 2,000-file folder's tasks overtake the bulk of a 20,000-file folder's
    without making the big folder wait for every later one (least attained service)."""
    return min(position.bit_length(), PRIORITY_STEPS[-1])


SENT_AT_HEADER = "sent_at"


def stamp_sent_at(*, headers: dict[str, Any] | None = None, **_: Any) -> None:
    """``before_task_publish``: the publish time rides in the message, for the age of the oldest
    waiting task (``apps/core/queue_metrics.py``); the Redis lists keep no time of their own."""
    if headers is not None:
        headers.setdefault(SENT_AT_HEADER, time.time())

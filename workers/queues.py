"""Queue names and routing: one place, so operators know what a worker with `-Q x` consumes."""

from __future__ import annotations

from enum import StrEnum

from kombu import Exchange, Queue


class QueueName(StrEnum):
    INDEXING = "indexing"
    BACKFILL = "backfill"
    SYNC = "sync"
    ORGANIZE = "organize"
    AGENT = "agent"
    DEFAULT = "default"


TASK_QUEUES = tuple(Queue(name.value, Exchange(name.value), routing_key=name.value) for name in QueueName)

# Routed by task module: a task's queue follows from where it lives.
TASK_ROUTES = {
    "workers.indexing.*": {"queue": QueueName.INDEXING.value},
    "workers.backfill.*": {"queue": QueueName.BACKFILL.value},
    "workers.sync.*": {"queue": QueueName.SYNC.value},
    "workers.organize.*": {"queue": QueueName.ORGANIZE.value},
    "workers.agent.*": {"queue": QueueName.AGENT.value},
    "workers.maintenance.*": {"queue": QueueName.DEFAULT.value},
}

# What a worker given every queue consumes: the Procfile, compose and the test workers (checked by tests/deploy).
ALL_QUEUES: tuple[str, ...] = tuple(name.value for name in QueueName)

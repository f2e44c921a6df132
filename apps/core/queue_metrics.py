"""Each Celery queue's depth, the age of its oldest waiting task and the workers consuming it.

Read from the broker itself: kombu keeps a queue on Redis as one list per priority step, newest
pushed on the left and taken from the right, so a list's rightmost message is its oldest; its
publish time is the header ``stamp_sent_at`` adds. Live workers answer a broadcast
(``active_queues``) within ``inspect_timeout``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from celery import current_app

from apps.core.queues import ALL_QUEUES, SENT_AT_HEADER


@dataclass(frozen=True)
class QueueMetrics:
    name: str
    depth: int
    # None when empty, or when no waiting message carries a publish time (sent before the stamp).
    oldest_wait_seconds: float | None
    workers: tuple[str, ...]


def queue_metrics_list(
    *, inspect_timeout: float = 1.0, consumers: Mapping[str, Sequence[str]] | None = None
) -> list[QueueMetrics]:
    """`consumers`: the workers per queue when the caller already has them (`queue_consumers`)."""
    if consumers is None:
        consumers = queue_consumers(timeout=inspect_timeout)
    with current_app.connection_for_read() as connection:
        channel: Any = connection.default_channel  # kombu's Redis channel: its lists and their keys
        steps = list(channel.priority_steps)
        keys = [[f"{queue}{channel.sep}{step}" if step else queue for step in steps] for queue in ALL_QUEUES]
        with channel.client.pipeline() as pipe:
            for key in (key for queue_keys in keys for key in queue_keys):
                pipe.llen(key)
                pipe.lindex(key, -1)
            replies = pipe.execute()
    now = time.time()
    metrics = []
    for index, queue in enumerate(ALL_QUEUES):
        mine = replies[index * 2 * len(steps) : (index + 1) * 2 * len(steps)]
        sent = [_sent_at(raw, SENT_AT_HEADER) for raw in mine[1::2] if raw is not None]
        known = [value for value in sent if value is not None]
        metrics.append(
            QueueMetrics(
                name=queue,
                depth=sum(mine[0::2]),
                oldest_wait_seconds=round(max(0.0, now - min(known)), 3) if known else None,
                workers=tuple(sorted(consumers.get(queue, ()))),
            )
        )
    return metrics


def queue_consumers(*, timeout: float) -> dict[str, list[str]]:
    replies = current_app.control.inspect(timeout=timeout).active_queues() or {}
    by_queue: dict[str, list[str]] = {}
    for worker, queues in replies.items():
        for queue in queues:
            by_queue.setdefault(queue.get("name", ""), []).append(worker)
    return by_queue


def _sent_at(raw: bytes, header: str) -> float | None:
    try:
        value = json.loads(raw).get("headers", {}).get(header)
    except (ValueError, AttributeError):
        return None  # not a kombu message: nothing to date it by
    return float(value) if isinstance(value, int | float) else None

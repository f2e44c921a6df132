"""Message leases: the work of a worker host that dies outright is redelivered within about a minute.

Valkey (kombu's Redis transport) has no per-consumer acknowledgement: a delivered message waits in
the ``unacked`` hash, scored in ``unacked_index`` by its delivery time, until it is acked or until a
worker finds it older than the visibility timeout and puts it back on its queue. Nothing notices
that the consumer holding it is gone: a killed host's prefetched and running messages would wait
out the whole timeout, which had to exceed the longest task (an hour).

So the score becomes a lease. Every worker renews, every sixth of the visibility timeout, the
messages its consumer holds (prefetched, waiting for an ETA, or running), and in the same tick puts
back on their queues the messages nobody renewed for a whole timeout: only a dead host's. The
timeout is then sized to the renewal (a minute by default), not to the longest task, and a live
task is never redelivered however long it runs. The redelivered task carries its task id, which is
its claim token (files, a folder's sync, a run), so it takes its own claims back at once.

A thread, not the worker's event loop: with the solo pool a task blocks the loop while it runs.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from celery import bootsteps

logger = logging.getLogger(__name__)

# Renewals per visibility timeout: five can be missed (a stalled host) before a lease expires.
RENEWALS_PER_TIMEOUT = 6


def lease_renew_seconds(*, visibility_timeout: float) -> float:
    return max(0.2, visibility_timeout / RENEWALS_PER_TIMEOUT)


def held_delivery_tags(consumer: Any) -> list[str]:
    """Delivery tags of the messages this worker's task consumer holds unacked."""
    task_consumer = consumer.task_consumer
    if task_consumer is None:
        return []
    # kombu's virtual QoS keeps every delivered, not yet acked message here (acked ones linger
    # until its next flush; renewing those is a no-op). The consumer's thread may change it while
    # this one reads: retry the copy.
    delivered = task_consumer.channel.qos._delivered
    for _ in range(5):
        try:
            return list(delivered)
        except RuntimeError:
            continue
    return []


def leases_renew(*, channel: Any, tags: list[str]) -> None:
    """Score the held messages as delivered now; XX: a message acked or restored meanwhile stays gone."""
    if tags:
        now = time.time()
        with channel.conn_or_acquire() as client:
            client.zadd(channel.unacked_index_key, dict.fromkeys(tags, now), xx=True)


def leases_expired_restore(*, channel: Any) -> None:
    """Put back on their queues the messages whose lease ran out (kombu's own restore, every call)."""
    channel.qos.restore_visible(num=channel.unacked_restore_limit, interval=1)


class MessageLeases(bootsteps.StartStopStep):
    """Consumer bootstep (config/celery.py): renews this worker's leases and restores dead ones."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, parent: Any) -> None:
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(parent, self._stopped), name="message-leases", daemon=True
        )
        self._thread.start()

    def stop(self, parent: Any) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def shutdown(self, parent: Any) -> None:
        self.stop(parent)

    def _run(self, consumer: Any, stopped: threading.Event) -> None:
        timeout = consumer.app.conf.broker_transport_options.get("visibility_timeout", 3600)
        interval = lease_renew_seconds(visibility_timeout=timeout)
        logger.info("renewing message leases every %.1fs (visibility timeout %ss)", interval, timeout)
        while not stopped.wait(interval):
            try:
                with consumer.app.connection_for_write() as connection:
                    channel = connection.default_channel
                    leases_renew(channel=channel, tags=held_delivery_tags(consumer))
                    leases_expired_restore(channel=channel)
            except Exception:
                # The broker is down or restarting: the consumer reconnects on its own; so do we.
                logger.warning("renewing message leases failed; trying again", exc_info=True)

"""Message leases against the real Valkey, through kombu's own Redis transport (no worker needed):
renewing keeps a held message unacked; one nobody renewed for the visibility timeout goes back to
its queue; a renewal never brings back a message that was acked meanwhile."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kombu import Exchange, Queue

from config.celery import app
from workers.leases import lease_renew_seconds, leases_expired_restore, leases_renew


@pytest.fixture
def channel() -> Iterator[Any]:
    with app.connection_for_write() as connection:
        yield connection.default_channel


@pytest.fixture
def queue(channel) -> Iterator[Queue]:
    name = f"test-leases-{uuid.uuid4().hex}"
    declared = Queue(name, Exchange(name), routing_key=name)(channel)
    declared.declare()
    yield declared
    declared.delete()


def deliver(channel, queue: Queue) -> Any:
    """Publish one message and take it unacked, as a worker's consumer does."""
    producer = app.amqp.Producer(channel)
    producer.publish({"n": 1}, exchange=queue.exchange, routing_key=queue.routing_key)
    message = queue.get(no_ack=False)
    assert message is not None
    return message


def score(channel, tag: str) -> float | None:
    with channel.conn_or_acquire() as client:
        return client.zscore(channel.unacked_index_key, tag)


def waiting(channel, queue: Queue) -> int:
    with channel.conn_or_acquire() as client:
        return client.llen(queue.name)


def age(channel, tag: str, seconds: float) -> None:
    with channel.conn_or_acquire() as client:
        client.zadd(channel.unacked_index_key, {tag: time.time() - seconds})


def test_a_renewed_lease_stays_and_an_expired_one_goes_back_to_its_queue(channel, queue):
    timeout = channel.visibility_timeout
    held, dead = deliver(channel, queue), deliver(channel, queue)
    assert waiting(channel, queue) == 0
    for message in (held, dead):
        age(channel, message.delivery_tag, timeout + 1)

    leases_renew(channel=channel, tags=[held.delivery_tag])
    assert time.time() - (score(channel, held.delivery_tag) or 0) < 5
    leases_expired_restore(channel=channel)

    assert score(channel, dead.delivery_tag) is None  # restored: off the books, back on the queue
    assert score(channel, held.delivery_tag) is not None
    assert waiting(channel, queue) == 1
    again = queue.get(no_ack=False)
    assert again is not None and again.headers.get("redelivered") is True
    for message in (held, again):
        message.ack()


def test_renewing_an_acked_message_does_not_bring_it_back(channel, queue):
    message = deliver(channel, queue)
    message.ack()
    leases_renew(channel=channel, tags=[message.delivery_tag])
    assert score(channel, message.delivery_tag) is None


def test_leases_are_renewed_several_times_per_timeout():
    assert lease_renew_seconds(visibility_timeout=60) == 10
    assert lease_renew_seconds(visibility_timeout=0.1) == 0.2

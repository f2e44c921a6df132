"""The event bus: per-channel events on Redis, live and replayable, written and read here only.

Each event is appended to a capped Redis stream (``events:<channel>``, with a TTL). The stream is
both the log and the live feed: its ids are the SSE event ids, and readers block in XREAD on it, so
a client that connects late or reconnects with ``Last-Event-ID`` replays exactly what it missed,
in order, and then follows live in the same loop. Channels: ``run:<uuid>`` for chat/agent runs,
``folder:<id>`` for a folder's indexing, sync and organize events, ``inbox:<user id>`` for copies of
the folder events a person's inbox follows, whatever the number of their folders (`EVENT_COPIES`).
"""

from __future__ import annotations

import functools
import json
import logging
import re
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio as aioredis
from django.conf import settings
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

_STREAM_ID = re.compile(r"^\d{1,20}-\d{1,20}$")
TERMINAL_TYPES = frozenset({"done", "error"})


@dataclass(frozen=True)
class Event:
    id: str
    type: str
    data: dict[str, Any]

    def as_sse(self) -> str:
        return f"id: {self.id}\nevent: {self.type}\ndata: {json.dumps(self.data)}\n\n"


# (channel, type, data) -> other (channel, data) to log the same event on, in the same round trip.
# Apps above core register here (the inbox copies its folders' events to each organizer's channel).
EventCopier = Callable[[str, str, dict[str, Any]], Sequence[tuple[str, dict[str, Any]]]]
EVENT_COPIES: list[EventCopier] = []


def _key(channel: str) -> str:
    return f"events:{channel}"


def redis_client() -> redis.Redis:
    """A client on this process's pool for ``REDIS_URL``: connections are reused, not opened per event.

    The pool replaces a connection the server closed (a restart) when it next hands it out, and
    starts afresh in a forked worker.
    """
    return _client(settings.REDIS_URL)


@functools.cache
def _client(url: str) -> redis.Redis:
    # One client per URL: building one sets up its ~250 response callbacks, which cost more than
    # the command when indexing publishes a few events per file. Clients are thread-safe.
    pool = redis.ConnectionPool.from_url(url, decode_responses=True, socket_timeout=10)
    return redis.Redis(connection_pool=pool)


def run_channel(run_id: object) -> str:
    return f"run:{run_id}"


def folder_channel(folder_id: int) -> str:
    return f"folder:{folder_id}"


def inbox_channel(user_id: int) -> str:
    return f"inbox:{user_id}"


def is_valid_event_id(value: str) -> bool:
    return bool(_STREAM_ID.match(value))


def publish_event(*, channel: str, type: str, data: dict[str, Any], client: redis.Redis | None = None) -> str:
    """Append one event to the channel's log; returns its id. Followers blocked in XREAD wake up."""
    client = client or redis_client()
    pipe = client.pipeline()
    for target, body in [(channel, data), *_copies(channel=channel, type=type, data=data)]:
        key = _key(target)
        payload = json.dumps(body, default=str)
        pipe.xadd(key, {"type": type, "data": payload}, maxlen=settings.EVENT_LOG_MAX_EVENTS, approximate=True)
        pipe.expire(key, settings.EVENT_LOG_TTL_SECONDS)
    event_id = pipe.execute()[0]
    return str(event_id)


def _copies(*, channel: str, type: str, data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    copies: list[tuple[str, dict[str, Any]]] = []
    for copier in EVENT_COPIES:
        try:
            copies += copier(channel, type, data)
        except Exception:  # a copy never costs the event itself
            logger.warning("could not copy %s event of %s", type, channel, exc_info=True)
    return copies


def events_after(*, channel: str, after_id: str = "0", client: redis.Redis | None = None) -> list[Event]:
    """Events of a channel strictly after ``after_id`` ("0" for all), oldest first."""
    client = client or redis_client()
    if not is_valid_event_id(after_id) and after_id != "0":
        raise ValueError("Invalid event id.")
    start = f"({after_id}" if after_id != "0" else "-"
    rows: list[tuple[str, dict[str, str]]] = client.xrange(_key(channel), min=start)  # type: ignore[assignment]
    return [_decoded(event_id, fields) for event_id, fields in rows]


def last_event_id(*, channel: str, client: redis.Redis | None = None) -> str:
    """The id of the channel's newest event, "0" when it has none: where a reader that has just
    read the current state should start following."""
    client = client or redis_client()
    rows: list[tuple[str, dict[str, str]]] = client.xrevrange(_key(channel), count=1)  # type: ignore[assignment]
    return rows[0][0] if rows else "0"


class EventBusUnavailable(Exception):
    """Redis cannot be reached: a follower should tell its client to resume later, not hang."""


async def events_follow(
    *, channel: str, after_id: str = "0", quiet_seconds: float
) -> AsyncGenerator[Event | None, None]:
    """Every event of a channel after ``after_id``, then each new one as it is logged, forever.

    Yields None whenever ``quiet_seconds`` pass without an event, so the caller can send a
    heartbeat or decide to stop. Raises EventBusUnavailable when Redis goes away.
    """
    client = aioredis.Redis.from_url(settings.REDIS_URL, decode_responses=True)
    key, last_id, last_yield = _key(channel), after_id, time.monotonic()
    try:
        while True:
            wait_ms = max(1, int((quiet_seconds - (time.monotonic() - last_yield)) * 1000))
            try:
                rows = await client.xread({key: last_id}, count=500, block=wait_ms)
            except (RedisConnectionError, RedisTimeoutError) as exc:
                raise EventBusUnavailable(str(exc)) from exc
            if rows:
                for event_id, fields in rows[0][1]:
                    last_id = event_id
                    yield _decoded(event_id, fields)
                last_yield = time.monotonic()
            elif time.monotonic() - last_yield >= quiet_seconds:
                yield None
                last_yield = time.monotonic()
    finally:
        await client.aclose()


def _decoded(event_id: str, fields: dict[str, str]) -> Event:
    return Event(id=event_id, type=fields["type"], data=json.loads(fields["data"]))

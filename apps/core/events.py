"""The event bus: per-channel events on Redis, live and replayable.

Each event is appended to a capped Redis stream (``events:<channel>``, with a TTL) and
announced on the pub/sub channel of the same name. The stream is the source of truth: its ids
are the SSE event ids, so a client that connects late or reconnects with ``Last-Event-ID``
replays exactly what it missed, in order. Channels: ``run:<uuid>`` for chat/agent runs,
``folder:<id>`` for indexing and sync progress.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings

_STREAM_ID = re.compile(r"^\d{1,20}-\d{1,20}$")
TERMINAL_TYPES = frozenset({"done", "error"})


@dataclass(frozen=True)
class Event:
    id: str
    type: str
    data: dict[str, Any]

    def as_sse(self) -> str:
        return f"id: {self.id}\nevent: {self.type}\ndata: {json.dumps(self.data)}\n\n"


def _key(channel: str) -> str:
    return f"events:{channel}"


def stream_key(channel: str) -> str:
    """The Redis stream holding a channel's log, for readers that follow it (async SSE views)."""
    return _key(channel)


def redis_client() -> redis.Redis:
    """A client on this process's pool for ``REDIS_URL``: connections are reused, not opened per event.

    The pool replaces a connection the server closed (a restart) when it next hands it out, and
    starts afresh in a forked worker.
    """
    return redis.Redis(connection_pool=_pool(settings.REDIS_URL))


@functools.cache
def _pool(url: str) -> redis.ConnectionPool:
    return redis.ConnectionPool.from_url(url, decode_responses=True, socket_timeout=10)


def run_channel(run_id: object) -> str:
    return f"run:{run_id}"


def folder_channel(folder_id: int) -> str:
    return f"folder:{folder_id}"


def is_valid_event_id(value: str) -> bool:
    return bool(_STREAM_ID.match(value))


def publish_event(*, channel: str, type: str, data: dict[str, Any], client: redis.Redis | None = None) -> str:
    """Append and announce one event; returns its id."""
    client = client or redis_client()
    key = _key(channel)
    payload = json.dumps(data, default=str)
    pipe = client.pipeline()
    pipe.xadd(key, {"type": type, "data": payload}, maxlen=settings.EVENT_LOG_MAX_EVENTS, approximate=True)
    pipe.expire(key, settings.EVENT_LOG_TTL_SECONDS)
    event_id = pipe.execute()[0]
    client.publish(key, json.dumps({"id": event_id, "type": type, "data": data}, default=str))
    return str(event_id)


def events_after(*, channel: str, after_id: str = "0", client: redis.Redis | None = None) -> list[Event]:
    """Events of a channel strictly after ``after_id`` ("0" for all), oldest first."""
    client = client or redis_client()
    if not is_valid_event_id(after_id) and after_id != "0":
        raise ValueError("Invalid event id.")
    start = f"({after_id}" if after_id != "0" else "-"
    rows: list[tuple[str, dict[str, str]]] = client.xrange(_key(channel), min=start)  # type: ignore[assignment]
    return [Event(id=event_id, type=fields["type"], data=json.loads(fields["data"])) for event_id, fields in rows]

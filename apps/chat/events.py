"""Publishing one run's events on its channel (`apps.core.events`), in order, from one thread."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import redis

from apps.core.events import Event, publish_event, redis_client, run_channel
from apps.llm.types import TextDelta

EventCallback = Callable[[Event], None]

# Word-by-word deltas would cost two Redis round trips each; batching them this long is invisible
# to a reader and keeps a long answer to a few dozen events.
TEXT_FLUSH_SECONDS = 0.05


class RunEvents:
    """Each event goes to the run's Redis log and, when given, to `on_event` (CLI, benchmarks).

    Text deltas are coalesced; any other event first flushes pending text, so order holds.
    """

    def __init__(
        self, *, run_id: object, on_event: EventCallback | None = None, client: redis.Redis | None = None
    ) -> None:
        self.channel = run_channel(run_id)
        self._on_event = on_event
        self._client = client or redis_client()
        self._pending: list[str] = []
        self._last_text_flush = 0.0

    def emit(self, type: str, data: dict[str, Any]) -> Event:
        if type != "text_delta":
            self.flush_text()
        return self._publish(type, data)

    def status(self, phase: str, **data: Any) -> Event:
        return self.emit("status", {"phase": phase, **data})

    def text(self, delta: TextDelta) -> None:
        """An `on_text` callback for `LLMProvider.complete`."""
        self._pending.append(delta.text)
        if time.monotonic() - self._last_text_flush >= TEXT_FLUSH_SECONDS:
            self.flush_text()

    def flush_text(self) -> None:
        if not self._pending:
            return
        text, self._pending = "".join(self._pending), []
        self._last_text_flush = time.monotonic()
        self._publish("text_delta", {"text": text})

    def _publish(self, type: str, data: dict[str, Any]) -> Event:
        event = Event(
            id=publish_event(channel=self.channel, type=type, data=data, client=self._client), type=type, data=data
        )
        if self._on_event is not None:
            self._on_event(event)
        return event

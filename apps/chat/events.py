"""Publishing one run's events on its channel (`apps.core.events`), in order, from one thread."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from typing import Any

import redis
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.chat.cancel import RunCancelled, run_cancel_flag_raised
from apps.core.events import Event, publish_event, redis_client, run_channel
from apps.llm.types import TextDelta

EventCallback = Callable[[Event], None]

# Word-by-word deltas would cost two Redis round trips each; batching them this long is invisible
# to a reader and keeps a long answer to a few dozen events.
TEXT_FLUSH_SECONDS = 0.05
# Steps a person follows: each carries when it happened and a one-line account of it.
STEP_EVENTS = frozenset({"status", "tool_call", "tool_result", "text_reset", "notice"})
# Where a run may stop when asked to (`apps.chat.cancel`): before a phase or a tool call starts. The
# other place is each text flush (`text`). Never at `message`, `done` or `error`: the run is ending.
CANCEL_POINTS = frozenset({"status", "tool_call"})
STEP_DOC = (
    "Server-sent events, in order: `status` (phase), `tool_call`, `tool_result`, `text_delta` "
    "(answer text as the model writes it), `text_reset` (text streamed so far belonged to a turn "
    "that went on to call tools, or was a reply whose tool call failed: discard it), "
    "`notice` (the model is unavailable: `kind` model_unavailable, `failure` one of unreachable, timeout, "
    "server_error, auth, rate_limited, paused, rejected, or budget: the user's model budget is used up; "
    "the answer comes from the offline answerer; or `kind` agent_mode_disabled: agent mode is turned off on "
    "the server, the answer comes from standard mode), "
    "`message` (the saved answer), then `done` or `error`. "
    "Step events (status, tool_call, tool_result, text_reset, notice) also carry `timestamp` (ISO 8601, UTC) "
    "and `message`, a one-line human account of the step."
)
MESSAGE_VALUE_CHARS = 80
_PHASES = {
    "planning": gettext_lazy("Planning the research"),
    "reading_images": gettext_lazy("Reading the attached images"),
    "searching": gettext_lazy("Searching the folder"),
    "generating": gettext_lazy("Writing the answer"),
    "reading_file": gettext_lazy("Reading documents"),
    "fallback": gettext_lazy("Falling back to a single search and answer"),
}


class RunEvents:
    """Each event goes to the run's Redis log and, when given, to `on_event` (CLI, benchmarks).

    Text deltas are coalesced; any other event first flushes pending text, so order holds. What
    the client was shown of the answer is kept (`text_so_far`, `first_text_at`): a stopped run
    saves it, and the answer's label says when the first text reached the user.
    """

    def __init__(
        self, *, run_id: object, on_event: EventCallback | None = None, client: redis.Redis | None = None
    ) -> None:
        self.channel = run_channel(run_id)
        self._on_event = on_event
        self._client = client or redis_client()
        self.run_id = run_id
        self._pending: list[str] = []
        self._shown: list[str] = []
        self._last_text_flush = 0.0
        self.first_text_at: dt.datetime | None = None

    def emit(self, type: str, data: dict[str, Any]) -> Event:
        if type in CANCEL_POINTS:
            self.raise_if_cancelled()
        if type != "text_delta":
            self.flush_text()
        if type in STEP_EVENTS:
            data = {
                **data,
                "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
                "message": data.get("message") or step_message(type, data),
            }
        return self._publish(type, data)

    def status(self, phase: str, **data: Any) -> Event:
        return self.emit("status", {"phase": phase, **data})

    def text(self, delta: TextDelta) -> None:
        """An `on_text` callback for `LLMProvider.complete`."""
        self._pending.append(delta.text)
        if time.monotonic() - self._last_text_flush >= TEXT_FLUSH_SECONDS:
            self.raise_if_cancelled()
            self.flush_text()

    def raise_if_cancelled(self) -> None:
        """Raises `RunCancelled` once the run's owner asked to stop it."""
        if run_cancel_flag_raised(run_id=self.run_id, client=self._client):
            raise RunCancelled()

    def text_so_far(self) -> str:
        """The answer text written since the last `text_reset`, sent or still pending."""
        return "".join(self._shown) + "".join(self._pending)

    def flush_text(self) -> None:
        if not self._pending:
            return
        text, self._pending = "".join(self._pending), []
        self._last_text_flush = time.monotonic()
        self._publish("text_delta", {"text": text})

    def _publish(self, type: str, data: dict[str, Any]) -> Event:
        if type == "text_delta":
            self._shown.append(data["text"])
            self.first_text_at = self.first_text_at or dt.datetime.now(dt.UTC)
        elif type == "text_reset":
            self._shown = []
        event = Event(
            id=publish_event(channel=self.channel, type=type, data=data, client=self._client), type=type, data=data
        )
        if self._on_event is not None:
            self._on_event(event)
        return event


def step_message(type: str, data: Mapping[str, Any]) -> str:
    """One line a person can read for a step event, from the event's own data."""
    if type == "tool_call":
        tool = data.get("tool_name", _("a tool"))
        return _("Calling %(tool)s%(arguments)s") % {"tool": tool, "arguments": _arguments(data.get("tool_input"))}
    if type == "tool_result":
        done = _("%(tool)s failed: %(output)s") if data.get("status") == "error" else _("%(tool)s done: %(output)s")
        line = done % {"tool": data.get("tool_name", "Tool"), "output": data.get("tool_output", "")}
        return line.strip().rstrip(":")
    if type == "text_reset":
        return _("The text so far was not the answer: the model went on to use tools, or its reply was refused")
    phase = str(data.get("phase", ""))
    line = str(_PHASES.get(phase) or phase.replace("_", " ").capitalize() or _("Working"))
    if data.get("reason"):
        line += f" ({data['reason']})"
    if data.get("iteration"):
        line = _("Step %(n)s: %(text)s") % {"n": data["iteration"], "text": line}
    return line


def _arguments(value: Any) -> str:
    if not isinstance(value, Mapping) or not value:
        return ""
    shown = ", ".join(f"{key}={str(item)[:MESSAGE_VALUE_CHARS]!r}" for key, item in list(value.items())[:3])
    return f" ({shown})"

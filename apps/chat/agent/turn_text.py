"""The text a model turn streams to the run's events, and taking it back.

Any turn may turn out to be the answer, so its text is published as it arrives. A turn that ends
in tool calls (or in nothing) was no answer: its text is retracted with `text_reset`. A model call
abandoned at a deadline may still stream; once abandoned, its text must not reach the events (only
the current turn's does), and the check and the publish must not interleave: hence the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from apps.chat.events import RunEvents
from apps.llm.types import TextDelta


class TurnText:
    def __init__(self, *, events: RunEvents, iteration: Callable[[], int]) -> None:
        self.events = events
        self._iteration = iteration
        self.emitted = False  # whether answer text reached the user (it cannot be taken back quietly)
        self.resets = 0
        self.announce = True  # a turn's first delta says "generating" (a forced answer did already)
        self.streamed = False  # whether the current turn's text reached the events
        self.call = ""  # the call whose answer argument the streamed text is, if it is one
        self._lock = threading.Lock()
        self._turn = 0
        self._shown: list[str] = []  # the text the current turn published
        self._lead = ""  # the turn's leading whitespace, held until text follows it

    def begin_turn(self) -> int:
        """A new model turn; its number tells its deltas from an abandoned turn's."""
        with self._lock:
            self._turn += 1
            self.streamed, self._lead, self.call, self._shown = False, "", "", []
            return self._turn

    def abandon_turn(self) -> None:
        """The current turn is abandoned: whatever it still writes goes nowhere."""
        with self._lock:
            self._turn += 1

    def shown(self) -> str:
        return "".join(self._shown)

    def on_text(self, delta: TextDelta, *, turn: int | None = None) -> None:
        """`turn`: the model turn that wrote `delta`, when it was a model call (it may have been abandoned)."""
        with self._lock:
            if turn is not None and turn != self._turn:
                return
            if delta.call_id != self.call:  # an answering call starts: what came before was a preamble
                self._retract_locked()
                self.call = delta.call_id
            if not self.streamed:
                if not delta.text.strip():  # leading blanks announce nothing yet; an empty turn is no answer
                    self._lead += delta.text
                    return
                if self.announce:
                    self.events.status("generating", iteration=self._iteration())
                delta, self._lead = TextDelta(text=self._lead + delta.text), ""
            self.streamed = True
            self.emitted = True
            self._shown.append(delta.text)
            self.events.text(TextDelta(text=delta.text))

    def retract(self) -> None:
        """The turn's streamed text was no answer (it ended in tool calls, or in nothing)."""
        with self._lock:
            self._retract_locked()

    def _retract_locked(self) -> None:
        self.call, self._shown, self._lead = "", [], ""
        if not self.streamed:
            return
        self.streamed = False
        self.emitted = False
        self.resets += 1
        self.events.emit("text_reset", {"iteration": self._iteration()})

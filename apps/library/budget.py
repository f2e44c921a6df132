"""Bounds on one file's indexing: a time budget, and the cap on its text that budget implies.

A file that cannot be indexed within its budget fails alone with a reason a person understands,
instead of taking the task (and the files grouped with it) over Celery's time limit. The budget
is checked between stages and inside the long loops (chunking, embedding batches, pdf pages)
through ``budget_check()``, which reads the budget of the file being worked on from a context
variable, so parsers need no extra argument.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext_noop

from apps.core.stored_messages import StoredMessage, StoredMessageError


class FileBudgetExceeded(StoredMessageError):
    """The file used up its time budget; the message says how big it was and where it stopped."""


@dataclass
class FileBudget:
    seconds: float
    size: int = 0  # bytes read, until the text is known
    text_chars: int = 0
    spent: float = 0.0  # seconds used in earlier stretches (the file's work is not contiguous)
    _running_since: float | None = None

    def check(self, stage: str) -> None:
        if self.elapsed() > self.seconds:
            raise FileBudgetExceeded(
                gettext_noop(
                    "too large to index in %(duration)s: %(amount)s"
                    " (stopped while %(stage)s; INDEX_FILE_TIME_BUDGET_SECONDS)"
                ),
                duration=_duration(self.seconds),
                amount=self._amount(),
                stage=stage,
            )

    def elapsed(self) -> float:
        running = 0.0 if self._running_since is None else time.monotonic() - self._running_since
        return self.spent + running

    def charge(self, seconds: float) -> None:
        """Time spent on this file outside ``file_budget_running`` (its share of a shared batch)."""
        self.spent += seconds

    def resume(self) -> None:
        self._running_since = time.monotonic()

    def pause(self) -> None:
        self.spent = self.elapsed()
        self._running_since = None

    def _amount(self) -> StoredMessage:
        if self.text_chars:
            return StoredMessage(gettext_noop("%(size)s of text"), size=_megabytes(self.text_chars))
        return StoredMessage(gettext_noop("%(size)s file"), size=_megabytes(self.size))


_current: contextvars.ContextVar[FileBudget | None] = contextvars.ContextVar("file_budget", default=None)


@contextmanager
def file_budget_running(budget: FileBudget) -> Iterator[FileBudget]:
    """Counts time against ``budget`` while inside; ``budget_check`` checks it."""
    budget.resume()
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)
        budget.pause()


def budget_check(stage: str) -> None:
    """Raise ``FileBudgetExceeded`` when the file being indexed is over its budget; else nothing."""
    budget = _current.get()
    if budget is not None:
        budget.check(stage)


def budget_remaining() -> float:
    """Seconds the file being indexed has left of its budget (a whole budget outside indexing)."""
    budget = _current.get()
    if budget is None:
        return float(settings.INDEX_FILE_TIME_BUDGET_SECONDS)
    return max(0.0, budget.seconds - budget.elapsed())


def file_budget_new(*, size: int) -> FileBudget:
    return FileBudget(seconds=float(settings.INDEX_FILE_TIME_BUDGET_SECONDS), size=size)


def text_cap() -> tuple[int, str]:
    """The most characters of extracted text a file may bring, and the setting that says so.

    Sized to the time budget: embedding the text is most of a long file's indexing time, so a file
    whose text cannot be embedded within ``INDEX_FILE_TIME_BUDGET_SECONDS`` at the measured rate
    (``INDEX_TEXT_CHARS_PER_SECOND``) is skipped before any of that work rather than failing at its
    end. Every kind of file gets the same cap: a one-page edition of a whole book (1 M characters,
    about 50 s) is indexed like any other long document. ``INDEX_MAX_TEXT_CHARS`` fixes it instead.
    """
    if settings.INDEX_MAX_TEXT_CHARS:
        return settings.INDEX_MAX_TEXT_CHARS, "INDEX_MAX_TEXT_CHARS"
    chars = int(settings.INDEX_FILE_TIME_BUDGET_SECONDS * settings.INDEX_TEXT_CHARS_PER_SECOND)
    return chars, "INDEX_FILE_TIME_BUDGET_SECONDS x INDEX_TEXT_CHARS_PER_SECOND"


def text_cap_reason(*, chars: int) -> str | None:
    """Why the extracted text is too much to index, or None when it is within the cap."""
    cap, setting = text_cap()
    if chars <= cap:
        return None
    return StoredMessage(
        gettext_noop("too much text to index: %(chars)s characters, more than the limit of %(cap)s (%(setting)s)"),
        chars=f"{chars:,}",
        cap=f"{cap:,}",
        setting=setting,
    )


def _megabytes(count: int) -> StoredMessage:
    if count >= 1_000_000:
        return StoredMessage(gettext_noop("%(count)s MB"), count=f"{count / 1_000_000:.1f}")
    return StoredMessage(gettext_noop("%(count)s kB"), count=max(1, count // 1000))


def _duration(seconds: float) -> StoredMessage:
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        if minutes == 1:
            return StoredMessage(gettext_noop("1 minute"))
        return StoredMessage(gettext_noop("%(count)s minutes"), count=minutes)
    return StoredMessage(gettext_noop("%(count)s seconds"), count=f"{seconds:g}")

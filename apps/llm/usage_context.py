"""Who a model call is for: set where a run starts, read where the call is metered.

A context variable, so a call deep in a tool never needs the ids passed down to it. Threads do not
inherit it: code that hands model calls to a pool submits them through `contextvars.copy_context()`.
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class UsageContext:
    user_id: int | None = None
    folder_id: int | None = None
    run_id: uuid.UUID | None = None


_current: contextvars.ContextVar[UsageContext | None] = contextvars.ContextVar("llm_usage_context", default=None)


def current_usage_context() -> UsageContext | None:
    return _current.get()


@contextmanager
def usage_context(
    *, user_id: int | None, folder_id: int | None = None, run_id: uuid.UUID | None = None
) -> Iterator[UsageContext]:
    context = UsageContext(user_id=user_id, folder_id=folder_id, run_id=run_id)
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)

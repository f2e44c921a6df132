"""Django's ORM from the MCP server's coroutines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.db import close_old_connections

T = TypeVar("T")


async def orm_call(function: Callable[..., T], /, **kwargs: Any) -> T:
    """`function(**kwargs)` in a worker thread, as Django runs a request: connections past their age
    (or broken) closed before and after, so a long-lived server never holds one it should not."""

    def call() -> T:
        close_old_connections()
        try:
            return function(**kwargs)
        finally:
            close_old_connections()

    # Not thread-sensitive: each call opens and leaves its own connection, so it needs no shared thread,
    # and one slow search does not queue every other tool call behind it.
    return await sync_to_async(call, thread_sensitive=False)()

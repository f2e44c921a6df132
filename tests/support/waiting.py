"""Waiting for something another process brings about (a worker, a server, a watcher): one poll loop."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    condition: Callable[[], T],
    *,
    what: str,
    timeout: float = 60,
    interval: float = 0.05,
    process: subprocess.Popen[bytes] | None = None,
) -> T:
    """Poll until ``condition`` returns something true and return it; fail after ``timeout`` seconds,
    or at once if ``process``, which should bring it about, has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"process exited while waiting for {what}")
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")

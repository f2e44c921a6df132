"""Reliability options shared by task decorators (each task still declares its own queue)."""

from __future__ import annotations

from typing import Any

# Redelivered if the worker dies mid-task (acks_late + reject_on_worker_lost); tasks must be
# idempotent for that reason.
RELIABLE: dict[str, Any] = {"acks_late": True, "reject_on_worker_lost": True}


def retrying(*exceptions: type[BaseException], max_retries: int = 5) -> dict[str, Any]:
    """Options for a task that retries on transient errors with exponential backoff + jitter."""
    return {
        **RELIABLE,
        "autoretry_for": exceptions,
        "retry_backoff": True,
        "retry_backoff_max": 600,
        "retry_jitter": True,
        "max_retries": max_retries,
    }

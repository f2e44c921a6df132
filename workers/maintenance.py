"""Small periodic and diagnostic tasks on the default queue."""

from __future__ import annotations

from celery import shared_task

from apps.core import task_limits
from workers.options import RELIABLE


@shared_task(name="workers.maintenance.ping", **RELIABLE, **task_limits.PING.options())
def ping(payload: str) -> str:
    """Round-trip check used by health tooling and the worker end-to-end test."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text", [payload])
        (echoed,) = cursor.fetchone() or ("",)
    return f"pong:{echoed}"

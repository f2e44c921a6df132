"""Liveness and readiness probes (Kubernetes' httpGet probes, compose's health check).

``/healthz`` says the process answers and touches nothing else, so an outage of PostgreSQL or
Redis never gets every web pod restarted. ``/readyz`` says whether this process can serve now:
the database answers, the broker (and the events Redis, where it is another server) answers a
PING, and no migration of the loaded code is unapplied. Both are answered by ``ProbeMiddleware``
ahead of every other middleware: the kubelet sends the pod's IP as the Host (which
``ALLOWED_HOSTS`` would refuse), plain HTTP (which an HTTPS redirect would bounce) and no session.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
import redis
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse

logger = logging.getLogger(__name__)

# A probe that waits longer than this is as good as failed: the kubelet gives up at its own timeout.
CHECK_TIMEOUT_SECONDS = 2
SHOWN_MIGRATIONS = 5

# Migrations are never un-applied behind a running process, so one success holds for its lifetime.
_migrations_applied = False


class UnappliedMigrations(Exception):
    pass


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    message: str
    milliseconds: float

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "message": self.message, "ms": round(self.milliseconds, 1)}


def readiness_checks() -> list[Check]:
    database = _timed("database", _database_check)
    checks = [database, _timed("redis", lambda: _redis_check(url=settings.CELERY_BROKER_URL, what="Celery broker"))]
    if settings.REDIS_URL != settings.CELERY_BROKER_URL:
        checks.append(_timed("events_redis", lambda: _redis_check(url=settings.REDIS_URL, what="events Redis")))
    if database.ok:  # else unknowable, and the database already names the failure
        checks.append(_timed("migrations", _migrations_check))
    return checks


_FAILURE = {
    "database": "database unreachable",
    "redis": "Celery broker (Redis) unreachable",
    "events_redis": "events Redis unreachable",
    "migrations": "migrations could not be read",
}


def _timed(name: str, check: Callable[[], str]) -> Check:
    started = time.monotonic()
    try:
        message, ok = check(), True
    except Exception as exc:  # noqa: BLE001 - whatever stops the check, the process is not ready
        # The exception's type only: an anonymous caller learns no host, user or path.
        logger.warning("readiness check %s failed: %r", name, exc)
        ok = False
        message = str(exc) if isinstance(exc, UnappliedMigrations) else f"{_FAILURE[name]} ({type(exc).__name__})"
    return Check(name, ok=ok, message=message, milliseconds=(time.monotonic() - started) * 1000)


def _database_check() -> str:
    # A connection of its own with a short connect timeout: Django's would wait for the OS's
    # TCP timeout on a host that drops packets, and a failed probe must not disturb it.
    params = connections[DEFAULT_DB_ALIAS].get_connection_params()
    with psycopg.connect(**params, connect_timeout=CHECK_TIMEOUT_SECONDS, autocommit=True) as raw:
        raw.execute("SELECT set_config('statement_timeout', %s, false)", [f"{CHECK_TIMEOUT_SECONDS}s"])
        raw.execute("SELECT 1")
    return "ok"


def _redis_check(*, url: str, what: str) -> str:
    client = redis.Redis.from_url(
        url, socket_timeout=CHECK_TIMEOUT_SECONDS, socket_connect_timeout=CHECK_TIMEOUT_SECONDS
    )
    try:
        client.ping()
    finally:
        client.close()
    return f"{what} answers PING"


def _migrations_check() -> str:
    global _migrations_applied
    if _migrations_applied:
        return "ok (checked earlier in this process)"
    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        names = [f"{migration.app_label}.{migration.name}" for migration, _backwards in plan[:SHOWN_MIGRATIONS]]
        raise UnappliedMigrations(f"{len(plan)} unapplied: {', '.join(names)}")
    _migrations_applied = True
    return "ok"


def readyz(request: HttpRequest) -> JsonResponse:
    checks = readiness_checks()
    failed = [check for check in checks if not check.ok]
    detail = f"Not ready: {'; '.join(check.message for check in failed)}." if failed else "Ready."
    return JsonResponse(
        {
            "ready": not failed,
            "failed": [check.name for check in failed],
            "detail": detail,
            "checks": {check.name: check.as_json() for check in checks},
        },
        status=503 if failed else 200,
    )


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


PROBES: dict[str, Callable[[HttpRequest], HttpResponse]] = {"/healthz": healthz, "/readyz": readyz}


class ProbeMiddleware:
    """First in ``MIDDLEWARE``: answers the probes before host validation, HTTPS redirects,
    sessions and authentication run; every other request passes through untouched."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        probe = PROBES.get(request.path_info)
        return self.get_response(request) if probe is None else _answer(probe, request)


def _answer(probe: Callable[[HttpRequest], HttpResponse], request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    response = probe(request)
    response["Cache-Control"] = "no-store"
    return response

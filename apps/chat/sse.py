"""Server-sent events of a run: replay after Last-Event-ID, then follow live until done/error.

Async (ASGI): each open stream is one coroutine blocked in XREAD on the run's Redis stream, not a
thread. The stream ids are the SSE ids, so replay and live follow are one read loop without gaps.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import AsyncIterator

import redis.asyncio as aioredis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest, HttpResponseBase, JsonResponse, StreamingHttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from apps.chat.models import AgentRun, RunStatus
from apps.core.events import TERMINAL_TYPES, Event, is_valid_event_id, run_channel, stream_key

PING = ": ping\n\n"
# A finished run whose log is gone (expired, or Redis lost it) gets one synthesized terminal event;
# the grace period keeps that from racing the real one, published just after the database commit.
_TERMINAL_GRACE = dt.timedelta(seconds=5)


@require_GET
async def run_events(request: HttpRequest, run_id: uuid.UUID) -> HttpResponseBase:
    try:
        user = await authenticate(request)
    except AuthenticationFailed as exc:
        return JsonResponse({"detail": str(exc.detail)}, status=401)
    if user is None:
        return JsonResponse({"detail": "Authentication credentials were not provided."}, status=401)
    after_id = request.headers.get("Last-Event-ID") or request.GET.get("last_event_id") or "0"
    if after_id != "0" and not is_valid_event_id(after_id):
        return JsonResponse({"detail": "Malformed Last-Event-ID: expected an id like 1700000000000-0."}, status=400)
    if not await AgentRun.objects.filter(pk=run_id, owner_id=user.pk).aexists():
        return JsonResponse({"detail": "Run not found."}, status=404)
    return event_stream_response(run_id=run_id, after_id=after_id)


async def authenticate(request: HttpRequest) -> AbstractBaseUser | None:
    """The Token header when present (as DRF's TokenAuthentication reads it), else the session."""
    header = request.META.get("HTTP_AUTHORIZATION", "").split()
    if header and header[0].lower() == "token":
        if len(header) != 2:
            raise AuthenticationFailed("Invalid token header.")
        user, _ = await sync_to_async(TokenAuthentication().authenticate_credentials)(header[1])
        return user
    session_user: AbstractBaseUser | AnonymousUser = await request.auser()
    return session_user if session_user.is_authenticated and isinstance(session_user, AbstractBaseUser) else None


def event_stream_response(*, run_id: uuid.UUID, after_id: str = "0") -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        run_event_stream(run_id=run_id, after_id=after_id), content_type="text/event-stream"
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx would otherwise buffer the stream
    return response


async def run_event_stream(*, run_id: uuid.UUID, after_id: str = "0") -> AsyncIterator[str]:
    heartbeat = settings.SSE_HEARTBEAT_SECONDS
    key = stream_key(run_channel(run_id))
    client = aioredis.Redis.from_url(settings.REDIS_URL, decode_responses=True)
    last_id, last_sent = after_id, time.monotonic()
    try:
        while True:
            wait_ms = max(1, int((heartbeat - (time.monotonic() - last_sent)) * 1000))
            try:
                rows = await client.xread({key: last_id}, count=500, block=wait_ms)
            except (RedisConnectionError, RedisTimeoutError):
                # Redis is down: say so and end, rather than hang; the client resumes from its last id.
                yield _unsaved_event(
                    "error", {"run_id": str(run_id), "message": "Live updates are unavailable; reconnect to resume."}
                )
                return
            if rows:
                for event_id, fields in rows[0][1]:
                    last_id = event_id
                    yield Event(id=event_id, type=fields["type"], data=json.loads(fields["data"])).as_sse()
                    if fields["type"] in TERMINAL_TYPES:
                        return
                last_sent = time.monotonic()
                continue
            if time.monotonic() - last_sent < heartbeat:
                continue
            ending = await _terminal_without_log(run_id)
            if ending is not None:
                yield ending
                return
            yield PING
            last_sent = time.monotonic()
    finally:
        await client.aclose()


async def _terminal_without_log(run_id: uuid.UUID) -> str | None:
    run = await AgentRun.objects.filter(pk=run_id).only("status", "finished_at", "error").afirst()
    if run is None:
        return _unsaved_event("error", {"run_id": str(run_id), "message": "The run no longer exists."})
    if run.status not in (RunStatus.COMPLETED, RunStatus.ERROR) or run.finished_at is None:
        return None
    if run.finished_at > timezone.now() - _TERMINAL_GRACE:
        return None
    if run.status == RunStatus.ERROR:
        return _unsaved_event("error", {"run_id": str(run_id), "message": "The run failed."})
    return _unsaved_event("done", {"run_id": str(run_id), "status": run.status})


def _unsaved_event(type: str, data: dict[str, str]) -> str:
    # No id line: the client's Last-Event-ID keeps pointing at the last real event.
    return f"event: {type}\ndata: {json.dumps(data)}\n\n"

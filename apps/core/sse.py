"""Server-sent events over the event bus: what every stream view shares (runs today, folders next).

Async (ASGI): each open stream is one coroutine blocked in XREAD on its channel, not a thread.
A view checks the user and the object, then returns ``sse_response(sse_stream(...))``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import close_old_connections
from django.http import HttpRequest, JsonResponse, StreamingHttpResponse

from apps.core.events import Event, EventBusUnavailable, events_follow, is_valid_event_id
from apps.core.metrics import SSE_STREAMS_OPEN
from apps.core.models import TokenScope
from apps.core.stored_messages import stored_messages_in
from apps.core.tokens import (
    TokenInvalid,
    TokenScopeMissing,
    personal_token_from_header,
    personal_token_scope_check,
)

PING = ": ping\n\n"
# Called when a stream has been quiet for a heartbeat: a final event to send and stop, or None.
QuietCheck = Callable[[], Awaitable[str | None]]
# Whether the stream's reader may still read it (their access can be revoked while it is open).
AccessCheck = Callable[[], Awaitable[bool]]
# Whether the reader may see this one event (a stream mixing several folders' events).
EventCheck = Callable[[Event], Awaitable[bool]]
ACCESS_LOST = {"message": "You no longer have access to this folder."}


async def request_user(request: HttpRequest, *, scope: str = TokenScope.READ) -> AbstractBaseUser | None:
    """The personal token's user when the Authorization header carries one (as the REST API reads
    it), else the session's. Raises TokenInvalid (401) or TokenScopeMissing (403)."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    # A session's stream has no header: no thread hop to look up a token that is not there.
    token = await sync_to_async(personal_token_from_header)(authorization=header) if header else None
    if token is not None:
        personal_token_scope_check(token=token, scope=scope)
        return token.user
    session_user: AbstractBaseUser | AnonymousUser = await request.auser()
    return session_user if session_user.is_authenticated and isinstance(session_user, AbstractBaseUser) else None


async def stream_reader_or_error(
    request: HttpRequest, *, scope: str = TokenScope.READ
) -> tuple[AbstractBaseUser, str] | JsonResponse:
    """Who reads a stream and where they resume (the Last-Event-ID header, or ?last_event_id=;
    "0" for the whole log), or the 401/403/400 a stream view answers instead. A token needs `scope`."""
    try:
        user = await request_user(request, scope=scope)
    except (TokenInvalid, TokenScopeMissing) as exc:
        return JsonResponse({"detail": exc.message}, status=exc.status_code)
    if user is None:
        return JsonResponse({"detail": "Authentication credentials were not provided."}, status=401)
    after_id = request.headers.get("Last-Event-ID") or request.GET.get("last_event_id") or "0"
    if after_id != "0" and not is_valid_event_id(after_id):
        return JsonResponse({"detail": "Malformed Last-Event-ID: expected an id like 1700000000000-0."}, status=400)
    return user, after_id


async def sse_stream(
    *,
    channel: str,
    after_id: str = "0",
    ends_on: frozenset[str] = frozenset(),
    when_quiet: QuietCheck | None = None,
    still_allowed: AccessCheck | None = None,
    recheck_on: frozenset[str] = frozenset(),
    keep: EventCheck | None = None,
    unavailable: dict[str, str],
) -> AsyncIterator[str]:
    """The channel's events as SSE text: replay after ``after_id``, then live, with heartbeats.

    Ends after an event whose type is in ``ends_on``, or when ``when_quiet`` returns a final event,
    or with an ``error`` event once ``still_allowed`` says no (asked after an event whose type is
    in ``recheck_on`` and at every heartbeat). An event ``keep`` refuses is skipped.
    If Redis goes away the client gets one ``error`` event (``unavailable``) and the stream ends,
    rather than hang; it resumes from its last id.
    """
    events = events_follow(channel=channel, after_id=after_id, quiet_seconds=settings.SSE_HEARTBEAT_SECONDS)
    # The view's database connection goes back before the stream waits, and again at each heartbeat
    # after the checks: held for the stream's life, a pooled one (DB_POOL_MAX_SIZE) would be lost to
    # every other request for hours, and a few open pages would take the whole pool.
    await _connection_release()
    # By the channel's kind (run, folder, inbox), never its id; counted until the generator ends,
    # which a disconnecting client's close does too.
    with SSE_STREAMS_OPEN.labels(stream=channel.partition(":")[0]).track_inprogress():
        # aclosing: a client that disconnects closes this generator, and with it the Redis connection.
        async with contextlib.aclosing(events):
            try:
                async for event in events:
                    if event is not None and keep is not None and not await keep(event):
                        continue
                    if event is not None and event.type not in recheck_on:
                        yield _shown(event)
                        if event.type in ends_on:
                            return
                        continue
                    if still_allowed is not None and not await still_allowed():
                        yield unsaved_event("error", ACCESS_LOST)
                        return
                    if event is not None:
                        yield _shown(event)
                        continue
                    ending = await when_quiet() if when_quiet is not None else None
                    if ending is not None:
                        yield ending
                        return
                    await _connection_release()
                    yield PING
            except EventBusUnavailable:
                yield unsaved_event("error", unavailable)


async def _connection_release() -> None:
    # In the request's thread, where its connections live; closed only past DB_CONN_MAX_AGE (at once
    # when it is 0, and always when pooled: back to the pool), as at the end of a request.
    await sync_to_async(close_old_connections)()


def _shown(event: Event) -> str:
    # A stored reason (a file's, a sync's) in the reader's language; the log keeps it in English.
    return dataclasses.replace(event, data=stored_messages_in(event.data)).as_sse()


def sse_response(stream: AsyncIterator[str]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(stream, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx would otherwise buffer the stream
    return response


def unsaved_event(type: str, data: dict[str, str]) -> str:
    """An event that is not in the log: no id line, so the client's Last-Event-ID keeps pointing
    at the last real event."""
    return f"event: {type}\ndata: {json.dumps(data)}\n\n"

"""Server-sent events of a run: replay after Last-Event-ID, then follow live until done/error."""

from __future__ import annotations

import datetime as dt
import uuid

from django.http import HttpRequest, HttpResponseBase, JsonResponse, StreamingHttpResponse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from apps.chat.models import FINISHED_RUN_STATUSES, AgentRun, RunStatus
from apps.chat.selectors import runs_readable
from apps.core.events import TERMINAL_TYPES, run_channel
from apps.core.models import TokenScope
from apps.core.sse import sse_response, sse_stream, stream_reader_or_error, unsaved_event

# A finished run whose log is gone (expired, or Redis lost it) gets one synthesized terminal event;
# the grace period keeps that from racing the real one, published just after the database commit.
_TERMINAL_GRACE = dt.timedelta(seconds=5)


@require_GET
async def run_events(request: HttpRequest, run_id: uuid.UUID) -> HttpResponseBase:
    reader = await stream_reader_or_error(request, scope=TokenScope.CHAT)
    if isinstance(reader, JsonResponse):
        return reader
    user, after_id = reader
    if not await runs_readable(user=user).filter(pk=run_id).aexists():  # a revoked member's too
        return JsonResponse({"detail": _("Run not found.")}, status=404)
    return event_stream_response(run_id=run_id, after_id=after_id)


def event_stream_response(*, run_id: uuid.UUID, after_id: str = "0") -> StreamingHttpResponse:
    async def terminal_without_log() -> str | None:
        return await _terminal_without_log(run_id)

    return sse_response(
        sse_stream(
            channel=run_channel(run_id),
            after_id=after_id,
            ends_on=TERMINAL_TYPES,
            when_quiet=terminal_without_log,
            unavailable={"run_id": str(run_id), "message": _("Live updates are unavailable; reconnect to resume.")},
        )
    )


async def _terminal_without_log(run_id: uuid.UUID) -> str | None:
    run = await AgentRun.objects.filter(pk=run_id).only("status", "finished_at", "error").afirst()
    if run is None:
        return unsaved_event("error", {"run_id": str(run_id), "message": _("The run no longer exists.")})
    if run.status not in FINISHED_RUN_STATUSES or run.finished_at is None:
        return None
    if run.finished_at > timezone.now() - _TERMINAL_GRACE:
        return None
    if run.status == RunStatus.ERROR:
        return unsaved_event("error", {"run_id": str(run_id), "message": _("The run failed.")})
    return unsaved_event("done", {"run_id": str(run_id), "status": run.status})

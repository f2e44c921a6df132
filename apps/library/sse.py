"""Server-sent events of a folder: indexing progress, per-file results, syncs, suggestions, moves.

A folder's stream never ends by itself: the page keeps it open while it shows the folder.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBase, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from apps.core.events import folder_channel
from apps.core.sse import sse_response, sse_stream, stream_reader_or_error
from apps.library.access import afolder_access
from apps.library.progress import MEMBERS_EVENT


@require_GET
async def folder_events(request: HttpRequest, folder_id: int) -> HttpResponseBase:
    reader = await stream_reader_or_error(request)
    if isinstance(reader, JsonResponse):
        return reader
    user, after_id = reader
    if not await afolder_access(user=user, folder_id=folder_id):
        return JsonResponse({"detail": _("Folder not found.")}, status=404)
    return sse_response(
        sse_stream(
            channel=folder_channel(folder_id),
            after_id=after_id,
            still_allowed=lambda: afolder_access(user=user, folder_id=folder_id),
            recheck_on=frozenset({MEMBERS_EVENT}),
            unavailable={
                "folder_id": str(folder_id),
                "message": _("Live updates are unavailable; reconnect to resume."),
            },
        )
    )

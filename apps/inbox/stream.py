"""One event stream for a person's whole inbox: ``GET /api/inbox/events``.

Every suggestion, move and file event of a folder is also logged on the ``inbox:<user>`` channel
of each person who may organize it (its owner and its editors), when it is published: the page
follows one stream whatever the number of folders (a browser opens at most six connections per
server), and a reconnect with ``Last-Event-ID`` replays exactly what it missed. Each event is
checked against the reader's current role before it is sent, so a revoked member's stream stops
carrying that folder at once, replay included.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, HttpResponseBase, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from apps.core.events import Event, inbox_channel
from apps.core.sse import sse_response, sse_stream, stream_reader_or_error
from apps.library.access import FolderAction, folder_ids_allowed, folder_user_ids_allowed
from apps.organize.decisions import PROPOSAL_EVENT
from apps.organize.services import INBOX_FILE_EVENT

# The folder events an inbox shows: new suggestions, moves (and their undo), indexed files, inbox
# files left without a suggestion (`INBOX_FILE_EVENT`, with the reason), guideline lines proposed,
# and syncs (one that saw files move or go takes their suggestion cards away).
INBOX_EVENT_TYPES = frozenset({"suggestion", "file_moved", "file", "sync", INBOX_FILE_EVENT, PROPOSAL_EVENT})
_FOLDER_PREFIX = "folder:"


def inbox_event_copies(channel: str, type: str, data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """`core.events.EVENT_COPIES` hook: a folder's inbox event, for each person who organizes it."""
    if type not in INBOX_EVENT_TYPES or not channel.startswith(_FOLDER_PREFIX):
        return []
    folder_id = int(channel.removeprefix(_FOLDER_PREFIX))
    copy = {**data, "folder_id": folder_id}
    return [
        (inbox_channel(user_id), copy)
        for user_id in folder_user_ids_allowed(folder_id=folder_id, action=FolderAction.EDIT)
    ]


@require_GET
async def inbox_events(request: HttpRequest) -> HttpResponseBase:
    reader = await stream_reader_or_error(request)
    if isinstance(reader, JsonResponse):
        return reader
    user, after_id = reader
    if not await folder_ids_allowed(user=user, action=FolderAction.EDIT).aexists():
        return JsonResponse({"detail": _("You have no folder whose inbox you can organize.")}, status=404)
    return sse_response(
        sse_stream(
            channel=inbox_channel(user.pk),
            after_id=after_id,
            keep=lambda event: _may_organize(user, event),
            unavailable={"message": _("Live updates are unavailable; reconnect to resume.")},
        )
    )


async def _may_organize(user: AbstractBaseUser, event: Event) -> bool:
    folder_id = event.data.get("folder_id")
    if not isinstance(folder_id, int):
        return False
    return await folder_ids_allowed(user=user, action=FolderAction.EDIT).filter(pk=folder_id).aexists()

"""Waiting for an `ask` run's answer: its events as MCP progress notifications, then the answer.

The run executes in a thread of this process (`apps.mcp.tools.question_ask`) and publishes on its
channel as for any other reader (`apps.chat.events`); this follows that channel from its start, as
the streaming chat API's response does, and stops at the saved answer (`message`) or the `error`.
"""

from __future__ import annotations

import contextlib

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from apps.chat.events import STEP_EVENTS
from apps.core.api import ApplicationError
from apps.core.events import EventBusUnavailable, events_follow, run_channel
from apps.mcp.threads import orm_call
from apps.mcp.tools import answer_of, run_answer
from apps.mcp.types import Answer, Caller


async def answer_follow(*, ctx: Context, caller: Caller, run_id: str) -> Answer:
    """The run's answer; each step event meanwhile is one progress notification carrying its line
    (sent only when the client asked for progress, by a progress token). The lines are in the run's
    language, which is the caller's (`tools.question_ask`); this function's own errors too."""
    with translation.override(caller.language):
        return await _answer_followed(ctx=ctx, caller=caller, run_id=run_id)


async def _answer_followed(*, ctx: Context, caller: Caller, run_id: str) -> Answer:
    steps = 0
    events = events_follow(channel=run_channel(run_id), quiet_seconds=settings.SSE_HEARTBEAT_SECONDS)
    async with contextlib.aclosing(events):
        try:
            async for event in events:
                if event is None:
                    # Quiet for a heartbeat: the answer may be saved with its events lost (Redis restarted).
                    saved = await _saved_answer(caller=caller, run_id=run_id)
                    if saved is not None:
                        return saved
                elif event.type in STEP_EVENTS:
                    steps += 1
                    await ctx.report_progress(steps, message=str(event.data.get("message", event.type)))
                elif event.type == "message":
                    return answer_of(caller=caller, run_id=run_id, payload=event.data)
                elif event.type == "error":
                    raise ToolError(str(event.data.get("message") or _("The run failed.")))
        except EventBusUnavailable:
            saved = await _saved_answer(caller=caller, run_id=run_id)
            if saved is None:
                raise ToolError(
                    _("Live updates are unavailable; the answer will be in the conversation of run %(run_id)s.")
                    % {"run_id": run_id}
                ) from None
            return saved
    raise ToolError(_("The run's events ended without an answer."))  # events_follow never ends on its own


async def _saved_answer(*, caller: Caller, run_id: str) -> Answer | None:
    try:
        return await orm_call(run_answer, caller=caller, run_id=run_id)
    except ApplicationError as exc:
        raise ToolError(exc.message) from exc

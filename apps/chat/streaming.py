"""Streaming a run as the response of the request that starts it (chat and inbox endpoints)."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponseBase
from rest_framework.renderers import BaseRenderer

from apps.chat.models import AgentRun
from apps.chat.services import run_start_thread
from apps.chat.sse import event_stream_response


class EventStreamRenderer(BaseRenderer):
    """Lets `Accept: text/event-stream` through content negotiation.

    A streamed chat is a StreamingHttpResponse and never rendered; what is rendered here is a 4xx,
    sent as one `error` event so an SSE client can read why.
    """

    media_type = "text/event-stream"
    format = "sse"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        return f"event: error\ndata: {json.dumps(data, default=str)}\n\n".encode()


def run_streamed(run: AgentRun) -> HttpResponseBase:
    """Execute `run` in this process and stream its events as the response."""
    run_start_thread(run=run)
    response = event_stream_response(run_id=run.pk)
    response["X-Run-Id"] = str(run.pk)
    response["X-Conversation-Id"] = str(run.conversation_id)
    return response

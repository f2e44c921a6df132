"""A cap on how much of a request body the server reads: the largest any endpoint accepts.

Django's ASGI handler reads a whole body into a temporary file before any view runs, so a
chunked body (no Content-Length) would be spooled to disk however long it is, and only then
refused. This stops reading once the body passes what an inbox upload may be, and answers 413.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

# The form around an uploaded file (boundaries, folder_id, part headers) on top of its own bytes.
FORM_OVERHEAD_BYTES = 64 * 1024

Scope = dict[str, Any]
Message = dict[str, Any]


class _BodyTooLargeError(Exception):
    pass


def request_body_max_bytes() -> int:
    # A question's images (apps/chat/attachments.py) come in one body too.
    images = settings.CHAT_MAX_IMAGES * settings.CHAT_IMAGE_MAX_BYTES
    return max(settings.INBOX_UPLOAD_MAX_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE, images) + FORM_OVERHEAD_BYTES


class RequestBodyCap:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = request_body_max_bytes()
        received = 0
        started = False

        async def capped_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise _BodyTooLargeError
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, capped_receive, tracked_send)
        except _BodyTooLargeError:
            if started:
                raise
            await _too_large(send, limit=limit)


async def _too_large(send: Any, *, limit: int) -> None:
    detail = (
        f"The request body passed {limit:,} bytes and was not read further; uploads may be at most"
        f" {settings.INBOX_UPLOAD_MAX_BYTES:,} bytes (INBOX_UPLOAD_MAX_BYTES), a question's images"
        f" {settings.CHAT_IMAGE_MAX_BYTES:,} bytes each (CHAT_IMAGE_MAX_BYTES)."
    )
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    # connection: close, because the rest of the body was never read.
    headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})

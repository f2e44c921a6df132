"""A file's original bytes as an HTTP response: streamed, byte ranges, and never script in our origin.

Ranges (RFC 9110 §14) are parsed by Werkzeug's `parse_range_header`, which already knows the
grammar's corners (suffix ranges, open ends, unsatisfiable starts); one range is answered with a
206, an unsatisfiable one with a 416, a multi-range request (rare; PDF viewers send single ranges)
with the whole file, as the RFC allows.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import BinaryIO, cast

from django.http import FileResponse, JsonResponse
from django.http.response import HttpResponseBase
from werkzeug.http import parse_range_header

from apps.library.sources import OriginalContent

_BLOCK_BYTES = 256 * 1024
# Shown in the page rather than downloaded: what a browser renders itself without running our code.
_INLINE_PREFIXES = ("application/pdf", "image/")
# A folder's HTML or SVG is a document of its own once a browser opens it: `sandbox` gives it an
# opaque origin with scripts, forms and plugins off, so it can never act as the signed-in user.
# Chrome's PDF viewer is such a plugin and no sandbox token re-enables it, so a PDF (which nosniff
# keeps a PDF, whatever bytes it holds) is served without the sandbox; its scripts, if any, run in
# the viewer's own isolated process, not in this origin.
_SANDBOX = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; media-src 'self'"
_PDF_POLICY = "frame-ancestors 'self'"


class _Window:
    """At most `length` bytes of `stream` from `start`: what a response reads (no `tell`, so
    FileResponse leaves Content-Length to us)."""

    def __init__(self, stream: BinaryIO, *, start: int, length: int) -> None:
        stream.seek(start)
        self._stream = stream
        self._left = length

    def read(self, size: int = -1) -> bytes:
        wanted = self._left if size < 0 else min(size, self._left)
        data = self._stream.read(wanted) if wanted > 0 else b""
        self._left -= len(data)
        return data

    def close(self) -> None:
        self._stream.close()


class OriginalResponse(FileResponse):
    block_size = _BLOCK_BYTES

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # Under ASGI Django would list() a synchronous iterator first: the whole file in memory
        # before the first byte. Each block is read in a thread instead, and sent as it comes.
        blocks = iter(cast(Iterator[bytes], self.streaming_content))  # a file's blocks: never async
        while (block := await asyncio.to_thread(next, blocks, None)) is not None:
            yield block


def original_response(*, original: OriginalContent, range_header: str | None) -> HttpResponseBase:
    """The 200, 206 or 416 for `original` (whose stream the response closes)."""
    size = original.size
    start, end, status = 0, size, 200
    requested = parse_range_header(range_header) if range_header else None
    if requested is not None and requested.units == "bytes" and len(requested.ranges) == 1:
        bounds = requested.range_for_length(size)
        if bounds is None:
            original.stream.close()
            shown = (range_header or "")[:100]
            detail = f"The range {shown} is outside the file's {size} bytes."
            refused = JsonResponse({"detail": detail}, status=416)
            refused["Content-Range"] = f"bytes */{size}"
            return _secured(refused, mime_type=original.mime_type)
        (start, end), status = bounds, 206
    mime_type = original.mime_type or "application/octet-stream"
    response = OriginalResponse(
        _Window(original.stream, start=start, length=end - start),
        status=status,
        content_type=mime_type,
        as_attachment=not mime_type.startswith(_INLINE_PREFIXES),
        filename=original.name,
    )
    response["Content-Length"] = str(end - start)
    response["Accept-Ranges"] = "bytes"
    if status == 206:
        response["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
    return _secured(response, mime_type=mime_type)


def _secured(response: HttpResponseBase, *, mime_type: str) -> HttpResponseBase:
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = _PDF_POLICY if mime_type == "application/pdf" else _SANDBOX
    # The document page frames PDFs and images; XFrameOptionsMiddleware leaves a set value alone.
    response["X-Frame-Options"] = "SAMEORIGIN"
    response["Cross-Origin-Resource-Policy"] = "same-origin"
    # Per user (access was checked): no shared cache may keep it.
    response["Cache-Control"] = "private, no-cache"
    return response

"""A file's original bytes as an HTTP response: streamed, byte ranges, and never script in our origin.

Ranges (RFC 9110 §14) are parsed by Werkzeug's `parse_range_header`, which already knows the
grammar's corners (suffix ranges, open ends, unsatisfiable starts); one range is answered with a
206, an unsatisfiable one with a 416, a multi-range request (rare; PDF viewers send single ranges)
with the whole file, as the RFC allows.

A file fetched from a remote source (Drive) is sent whole only up to `CONTENT_MAX_BYTES` (past it:
413 with its link at the source, as a small page when a browser shows the answer itself). Ranges of
a larger file are still served, since a range is bounded by itself and keeps PDF viewers and media
players working; one range longer than the cap is cut to the cap, and its Content-Range says where
it stopped, as a client reading ranges expects.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from typing import BinaryIO, cast

from django.conf import settings
from django.http import FileResponse, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from werkzeug.http import parse_range_header

from apps.library.sources import FetchedOriginal, OriginalContent

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
# Our own page about a refusal: the site's stylesheet and nothing else, no script at all.
_PAGE_POLICY = "default-src 'none'; style-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'"


class _Window:
    """At most `length` bytes of `stream` from `start`: what a response reads (no `tell`, so
    FileResponse leaves Content-Length to us)."""

    def __init__(self, stream: BinaryIO, *, start: int, length: int, on_close: Callable[[], None]) -> None:
        stream.seek(start)
        self._stream = stream
        self._left = length
        self._on_close = on_close

    def read(self, size: int = -1) -> bytes:
        wanted = self._left if size < 0 else min(size, self._left)
        data = self._stream.read(wanted) if wanted > 0 else b""
        self._left -= len(data)
        return data

    def close(self) -> None:
        self._stream.close()
        self._on_close()


class _Pieces:
    """What a response reads of bytes fetched in pieces (each one request to the source): one
    piece in memory at a time, and none fetched before the response asks."""

    def __init__(self, pieces: Iterator[bytes], *, on_close: Callable[[], None]) -> None:
        self._pieces = pieces
        self._piece = b""
        self._at = 0
        self.close = on_close

    def read(self, size: int = -1) -> bytes:
        while self._at >= len(self._piece):
            piece = next(self._pieces, None)
            if piece is None:
                return b""
            self._piece, self._at = piece, 0
        stop = len(self._piece) if size < 0 else self._at + size
        data = self._piece[self._at : stop]
        self._at += len(data)
        return data


class OriginalResponse(FileResponse):
    block_size = _BLOCK_BYTES

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # Under ASGI Django would list() a synchronous iterator first: the whole file in memory
        # before the first byte. Each block is read in a thread instead, and sent as it comes.
        blocks = iter(cast(Iterator[bytes], self.streaming_content))  # a file's blocks: never async
        while (block := await asyncio.to_thread(next, blocks, None)) is not None:
            yield block


def original_response(
    *,
    original: OriginalContent | FetchedOriginal,
    range_header: str | None,
    on_close: Callable[[], None],
    navigation: bool = False,
) -> HttpResponseBase:
    """The 200, 206, 413 or 416 for `original` (whose stream the response closes); `on_close` runs
    once the response is done with it, at once for a refusal. `navigation`: the browser shows the
    answer itself (a tab, the document page's frame), so a 413 is a page a person can read."""
    size = original.size
    start, end, status = 0, size, 200
    requested = parse_range_header(range_header) if range_header else None
    if requested is not None and requested.units == "bytes" and len(requested.ranges) == 1:
        bounds = requested.range_for_length(size)
        if bounds is None:
            _refused(original, on_close)
            shown = (range_header or "")[:100]
            detail = f"The range {shown} is outside the file's {size} bytes."
            refused = JsonResponse({"detail": detail}, status=416)
            refused["Content-Range"] = f"bytes */{size}"
            return _secured(refused, mime_type=original.mime_type)
        (start, end), status = bounds, 206
    body: _Window | _Pieces
    if isinstance(original, FetchedOriginal):
        cap = settings.CONTENT_MAX_BYTES
        if status == 200 and size > cap:
            _refused(original, on_close)
            return _too_large(original, cap=cap, navigation=navigation)
        end = min(end, start + cap)
        body = _Pieces(original.fetch(start=start, end=end), on_close=on_close)
    else:
        body = _Window(original.stream, start=start, length=end - start, on_close=on_close)
    mime_type = original.mime_type or "application/octet-stream"
    response = OriginalResponse(
        body,
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


def _refused(original: OriginalContent | FetchedOriginal, on_close: Callable[[], None]) -> None:
    if isinstance(original, OriginalContent):
        original.stream.close()
    on_close()


def _too_large(original: FetchedOriginal, *, cap: int, navigation: bool) -> HttpResponseBase:
    if navigation:
        # Only a web address goes in the href: a link from elsewhere must never become script.
        link = original.link if original.link.startswith("https://") else ""
        context = {"name": original.name, "size": original.size, "cap": cap, "link": link}
        page = HttpResponse(render_to_string("library/original_too_large.html", context), status=413)
        refused = _secured(page, mime_type="text/html")
        refused["Content-Security-Policy"] = _PAGE_POLICY
    else:
        detail = (
            f"{original.name} is {original.size:,} bytes, more than the {cap:,} sent whole from its source; "
            "a byte range of it can still be asked for"
        )
        detail += f", or open it at its source: {original.link}" if original.link else "."
        answer = JsonResponse({"detail": detail, "link": original.link}, status=413)
        refused = _secured(answer, mime_type=original.mime_type)
    # The same URL answers a page or JSON by how it was asked for: no cache may hand one for the other.
    patch_vary_headers(refused, ("Accept", "Sec-Fetch-Dest"))
    return refused


def _secured(response: HttpResponseBase, *, mime_type: str) -> HttpResponseBase:
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = _PDF_POLICY if mime_type == "application/pdf" else _SANDBOX
    # The document page frames PDFs and images; XFrameOptionsMiddleware leaves a set value alone.
    response["X-Frame-Options"] = "SAMEORIGIN"
    response["Cross-Origin-Resource-Policy"] = "same-origin"
    # Per user (access was checked): no shared cache may keep it.
    response["Cache-Control"] = "private, no-cache"
    return response

"""Each request's duration by the URL pattern it matched (never the raw path: ids would make a
series per object), its method and status."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponseBase

from apps.core.metrics import HTTP_REQUEST_SECONDS

# Requests no URL pattern matched (404s of made-up paths): one series, whatever the path.
UNMATCHED = "<unmatched>"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class RequestMetricsMiddleware:
    # Both modes, so async views (the SSE streams) stay on the event loop.
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(self.get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        if iscoroutinefunction(self.get_response):
            return self._acall(request)
        started = time.perf_counter()
        response: HttpResponseBase = self.get_response(request)
        _observe(request, response, started)
        return response

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        started = time.perf_counter()
        response: HttpResponseBase = await self.get_response(request)
        _observe(request, response, started)
        return response


def _observe(request: HttpRequest, response: HttpResponseBase, started: float) -> None:
    match = request.resolver_match
    route = match.route if match is not None and match.route else UNMATCHED
    # Any other word a client sends as its method would be a new series.
    method = request.method if request.method in _METHODS else "other"
    HTTP_REQUEST_SECONDS.labels(route=route, method=method, status=str(response.status_code)).observe(
        time.perf_counter() - started
    )

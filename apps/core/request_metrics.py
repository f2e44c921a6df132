"""Each request's duration by the URL pattern it matched (never the raw path: ids would make a
series per object), its method and status."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase

from apps.core.metrics import HTTP_REQUEST_SECONDS

# Requests no URL pattern matched (404s of made-up paths): one series, whatever the path.
UNMATCHED = "<unmatched>"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class RequestMetricsMiddleware:
    # Sync, like the whole chain (apps.core.middleware.DatabaseUnavailableMiddleware says why). For
    # an SSE stream it times the view's answer, not the stream.

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = time.perf_counter()
        response = self.get_response(request)
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

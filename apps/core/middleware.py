"""A database that is down is a 503 with a JSON message, not a 500 traceback."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)


class DatabaseUnavailableMiddleware:
    # Both modes, so async views (the SSE stream) stay on the event loop.
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(self.get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponse | Awaitable[HttpResponse]:
        if iscoroutinefunction(self.get_response):
            return self._acall(request)
        response: HttpResponse = self.get_response(request)
        return response

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        response: HttpResponse = await self.get_response(request)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, OperationalError | InterfaceError):
            logger.error("database unavailable on %s %s: %r", request.method, request.path, exception)
            response = JsonResponse(
                {"detail": "The service is temporarily unavailable (database). Please retry shortly."}, status=503
            )
            response["Retry-After"] = "5"
            return response
        return None

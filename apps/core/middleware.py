"""A database that is down is a 503 with a JSON message, not a 500 traceback."""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin

logger = logging.getLogger(__name__)


# Django's mixin runs in both modes, so async views (the SSE streams) stay on the event loop; with
# only `process_exception` it adds no thread hop to a request.
class DatabaseUnavailableMiddleware(MiddlewareMixin):
    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, OperationalError | InterfaceError):
            logger.error("database unavailable on %s %s: %r", request.method, request.path, exception)
            response = JsonResponse(
                {"detail": "The service is temporarily unavailable (database). Please retry shortly."}, status=503
            )
            response["Retry-After"] = "5"
            return response
        return None

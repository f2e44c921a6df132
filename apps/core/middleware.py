"""A database that is down is a 503 with a JSON message, not a 500 traceback; a signed-in person's
interface language."""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import translation
from django.utils.deprecation import MiddlewareMixin
from django.utils.translation import gettext as _

from apps.core.preferences import user_language

logger = logging.getLogger(__name__)


class DatabaseUnavailableMiddleware(MiddlewareMixin):
    # Sync only, and last in MIDDLEWARE: Django then runs the whole chain above it in sync mode, so
    # under ASGI a request crosses into a worker thread once, instead of twice more for each of the
    # mixin middlewares above (their async mode wraps process_request and process_response in
    # sync_to_async). Measured: 2.3 ms less CPU a request in the web process (bench/README.md, "The
    # middleware chain"). Async views (the SSE streams) still run on the event loop: below the chain,
    # Django's ASGI handler calls them from its own async code.
    async_capable = False

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, OperationalError | InterfaceError):
            logger.error("database unavailable on %s %s: %r", request.method, request.path, exception)
            response = JsonResponse(
                {"detail": _("The service is temporarily unavailable (database). Please retry shortly.")}, status=503
            )
            response["Retry-After"] = "5"
            return response
        return None


class UserLanguageMiddleware(MiddlewareMixin):
    """After LocaleMiddleware (cookie, then Accept-Language): the language a signed-in person chose
    on their account page wins, on every device. API clients with a token (authenticated in the
    view, not here) get the cookie's or Accept-Language's."""

    def process_request(self, request: HttpRequest) -> None:
        user = getattr(request, "user", None)
        language = user_language(user_id=user.pk if user is not None and user.is_authenticated else None)
        if language:
            translation.activate(language)
            request.LANGUAGE_CODE = language

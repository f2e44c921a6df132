"""The interface's language: the scripts' catalog, and the account page's language choice."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import last_modified, require_POST
from django.views.i18n import JavaScriptCatalog

from apps.core.api import ApplicationError
from apps.core.preferences import language_check, user_language_set

# Catalogs change only with a deploy, which restarts the process: a browser revalidates with
# If-Modified-Since and is answered 304. base.html asks for it as ?l=<language>, so a change of
# language is another URL and never meets another language's catalog in a cache.
_STARTED = timezone.now()

javascript_catalog = last_modified(lambda request: _STARTED)(JavaScriptCatalog.as_view())


@require_POST
def language_choose(request: HttpRequest) -> HttpResponse:
    """Sets the interface's language ("" : the browser's) and goes back to the page it was chosen on.

    A signed-in person's choice is kept on their account, so it follows them to other browsers;
    the cookie carries it for this browser (and before logging in).
    """
    language = request.POST.get("language", "")
    try:
        if request.user.is_authenticated:
            user_language_set(user=request.user, language=language)
        else:
            language_check(language=language)
    except ApplicationError as exc:
        return HttpResponseBadRequest(exc.message)
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("web-api-tokens")
    response = redirect(target)
    if language:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            language,
            max_age=365 * 24 * 3600,
            samesite="Lax",
            secure=settings.SESSION_COOKIE_SECURE,
            httponly=True,
        )
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME, samesite="Lax")
    return response

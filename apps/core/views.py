from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views.defaults import page_not_found
from django.views.defaults import server_error as server_error_page


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A URL no route matches (`/api/folders/abc`, an id that is not a number): JSON under /api/,
    in the shape of every other API error, so clients need not parse Django's HTML page."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": _("Not found.")}, status=404)
    return page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """An unhandled exception: JSON under /api/ like every other API error, the friendly page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": _("Server error.")}, status=500)
    return server_error_page(request)

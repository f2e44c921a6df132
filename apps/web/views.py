"""Pages of the browser UI. Each renders a shell; its script reads and writes through the REST API."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from apps.connectors.drive.oauth import drive_connect_finish
from apps.core.api import ApplicationError
from apps.library.selectors import folder_get

DRIVE_CONNECTED = "Google Drive is connected. Pick a folder below to add it."


@login_required
def folder_list(request: HttpRequest) -> HttpResponse:
    notice = {"kind": "success", "text": DRIVE_CONNECTED} if request.GET.get("drive") == "connected" else None
    return _folders_page(request, notice=notice)


@require_GET
@login_required
def drive_callback(request: HttpRequest) -> HttpResponse:
    """Where Google's consent page sends the browser back: the folders page, saying how it went.

    Success redirects (a reload then cannot replay the one-time state); a refusal (denied consent,
    a forged, replayed or expired state, a refused code) is the folders page itself with a 400,
    and nothing stored.
    """
    params = request.GET
    try:
        drive_connect_finish(
            user=request.user,  # type: ignore[arg-type]
            state=params.get("state", "")[:128],
            code=params.get("code", "")[:2048],
            error=params.get("error", "")[:256],
        )
    except ApplicationError as exc:
        return _folders_page(request, notice={"kind": "error", "text": exc.message}, status=400)
    return redirect(f"{reverse('web-folders')}?drive=connected")


def _folders_page(request: HttpRequest, *, notice: dict[str, str] | None, status: int = 200) -> HttpResponse:
    # The roots are shown next to the path field: the API refuses local folders outside them.
    context = {"local_roots": settings.LOCAL_FOLDER_ROOTS, "drive_notice": notice}
    return render(request, "web/folders.html", context, status=status)


@login_required
def folder_chat(request: HttpRequest, folder_id: int) -> HttpResponse:
    folder = folder_get(user=request.user, folder_id=folder_id)
    if folder is None:
        raise Http404("Folder not found.")
    return render(request, "web/chat.html", {"folder": folder})


@login_required
def inbox(request: HttpRequest) -> HttpResponse:
    return render(request, "web/inbox.html")

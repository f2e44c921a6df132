"""Pages of the browser UI. Each renders a shell; its script reads and writes through the REST API."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.library.selectors import folder_get


@login_required
def folder_list(request: HttpRequest) -> HttpResponse:
    # Shown next to the path field: the API refuses local folders outside these roots.
    return render(request, "web/folders.html", {"local_roots": settings.LOCAL_FOLDER_ROOTS})


@login_required
def folder_chat(request: HttpRequest, folder_id: int) -> HttpResponse:
    folder = folder_get(user=request.user, folder_id=folder_id)
    if folder is None:
        raise Http404("Folder not found.")
    return render(request, "web/chat.html", {"folder": folder})


@login_required
def inbox(request: HttpRequest) -> HttpResponse:
    return render(request, "web/inbox.html")

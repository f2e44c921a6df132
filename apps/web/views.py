"""Pages of the browser UI. Each renders a shell; its script reads and writes through the REST API."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, User
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from apps.chat.selectors import conversation_get, conversation_list_of_removed_folders
from apps.connectors.drive.entries import WEB_VIEW_LINK
from apps.connectors.drive.oauth import drive_connect_finish
from apps.core.api import ApplicationError
from apps.core.models import TokenScope
from apps.core.preferences import user_language
from apps.core.tokens import TokenInvalid, TokenScopeMissing, personal_token_from_header, personal_token_scope_check
from apps.library.access import file_access, folder_access
from apps.library.document_selectors import (
    CHUNKS_PAGE_SIZE,
    file_chunk_get,
    file_chunk_position,
    file_chunk_quoting,
    file_original_too_large,
)
from apps.library.members import invitation_accept, invitation_check_invitee, invitation_get
from apps.library.models import Chunk, File
from apps.library.services import local_roots
from apps.web.readme import readme_section
from apps.web.signup import invitation_token_forget, invitation_token_keep

DRIVE_CONNECTED = gettext_lazy("Google Drive is connected. Pick a folder below to add it.")
DRIVE_SETUP = "Google Drive setup"  # the README's section
# The longest `?quote=` a document page searches its chunks for (a citation's snippet is shorter).
MAX_QUOTE_CHARS = 400
# The installed app's splash background and title bar: the stylesheet's light --bg and --accent.
MANIFEST_BACKGROUND = "#f5f6f8"
MANIFEST_THEME = "#2f5bd3"


# The browser fetches the manifest without credentials, so it is public, like the static icons it names.
@require_GET
def web_manifest(request: HttpRequest) -> HttpResponse:
    icons = [
        {"src": static("web/icons/icon.svg"), "sizes": "any", "type": "image/svg+xml"},
        {"src": static("web/icons/icon-192.png"), "sizes": "192x192", "type": "image/png"},
        {"src": static("web/icons/icon-512.png"), "sizes": "512x512", "type": "image/png"},
    ]
    manifest = {
        "name": "Folder Chat",
        "short_name": "Folder Chat",
        "description": "Chat with your folders: answers that cite the files they come from.",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "background_color": MANIFEST_BACKGROUND,
        "theme_color": MANIFEST_THEME,
        "icons": icons,
    }
    return JsonResponse(manifest, content_type="application/manifest+json")


@login_required
def folder_list(request: HttpRequest) -> HttpResponse:
    notice = {"kind": "success", "text": str(DRIVE_CONNECTED)} if request.GET.get("drive") == "connected" else None
    return _folders_page(request, notice=notice)


@require_GET
def drive_callback(request: HttpRequest) -> HttpResponse:
    """Where Google's consent page sends the browser back: the folders page, saying how it went.

    Success redirects (a reload then cannot replay the one-time state); a refusal (denied consent,
    a forged, replayed or expired state, a refused code) is the folders page itself with a 400,
    and nothing stored.
    """
    try:
        user = _session_or_token_user(request)
    except TokenScopeMissing as exc:
        return JsonResponse({"detail": exc.message}, status=exc.status_code)
    if user is None:
        # A browser logs in and comes back (the state keeps for a while); anything else is told why.
        if "text/html" in request.headers.get("Accept", ""):
            return redirect_to_login(request.get_full_path())
        return JsonResponse(
            {"detail": _("Log in first: the callback finishes a browser's Drive connection.")}, status=401
        )
    params = request.GET
    try:
        drive_connect_finish(
            user=user,
            state=params.get("state", "")[:128],
            code=params.get("code", "")[:2048],
            error=params.get("error", "")[:256],
        )
    except ApplicationError as exc:
        return _folders_page(request, notice={"kind": "error", "text": exc.message}, status=400)
    return redirect(f"{reverse('web-folders')}?drive=connected")


def _session_or_token_user(request: HttpRequest) -> AbstractBaseUser | None:
    if request.user.is_authenticated:
        return request.user
    try:
        token = personal_token_from_header(authorization=request.META.get("HTTP_AUTHORIZATION", ""))
    except TokenInvalid:
        return None
    # Finishing a Drive connection changes what the account reaches: a managing token's work.
    personal_token_scope_check(token=token, scope=TokenScope.MANAGE)
    return token.user if token else None


def _folders_page(request: HttpRequest, *, notice: dict[str, str] | None, status: int = 200) -> HttpResponse:
    # The roots are shown next to the path field: the API refuses local folders outside them.
    # An API client finishing the Drive callback with a token has no session user, and no roots to see.
    roots = local_roots(user=request.user) if isinstance(request.user, User) else []
    context = {
        "local_roots": [str(root) for root in roots],
        "drive_notice": notice,
        # Shown when Drive is not configured: the README's emulator commands, never a copy of them.
        "drive_demo": next(block.text for block in readme_section(title=DRIVE_SETUP) if block.kind == "code"),
        "removed_folder_conversations": conversation_list_of_removed_folders(user=request.user)[:50],
    }
    return render(request, "web/folders.html", context, status=status)


@login_required
def folder_chat(request: HttpRequest, folder_id: int) -> HttpResponse:
    folder = folder_access(user=request.user, folder_id=folder_id)
    return render(request, "web/chat.html", {"folder": folder, "agent_mode_enabled": settings.AGENT_MODE_ENABLED})


@login_required
def conversation(request: HttpRequest, conversation_id: int) -> HttpResponse:
    """A conversation by its id alone: in its folder's chat, or, once the folder was removed, kept
    read-only for its owner (nobody else's conversation survives the removal)."""
    found = conversation_get(user=request.user, conversation_id=conversation_id)
    if found is None:
        raise Http404(_("Conversation not found."))
    if found.folder_id is not None:
        return redirect(f"{reverse('web-folder-chat', kwargs={'folder_id': found.folder_id})}?c={found.pk}")
    return render(request, "web/conversation_removed.html", {"conversation": found})


@login_required
def inbox(request: HttpRequest) -> HttpResponse:
    return render(request, "web/inbox.html")


@login_required
def api_tokens(request: HttpRequest) -> HttpResponse:
    """The person's own settings: the interface's language, and their API tokens."""
    context = {"scopes": TokenScope.choices, "chosen_language": user_language(user_id=request.user.pk)}
    return render(request, "web/api_tokens.html", context)


def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """An invitation link: who invites to what, and a button to join (a GET never joins).

    Anonymous visitors log in first and come back here (`next`); the token stays in their session
    so that a Google sign-in may create the account it is meant for (apps/web/signup.py).
    """
    if not request.user.is_authenticated:
        invitation_token_keep(request=request, token=token)
        return redirect_to_login(request.get_full_path())
    try:
        if request.method == "POST":
            folder = invitation_accept(token=token, user=request.user)
            invitation_token_forget(request=request)
            return redirect(reverse("web-folder-chat", kwargs={"folder_id": folder.pk}))
        pending = invitation_get(token=token)
        invitation_check_invitee(invitation=pending, user=request.user)
    except ApplicationError as exc:
        return render(request, "web/invitation.html", {"error": exc.message}, status=exc.status_code)
    context = {
        "folder_name": pending.folder.name,
        "role": pending.role,
        "inviter": pending.created_by.get_username(),
        "expires_at": pending.expires_at,
    }
    return render(request, "web/invitation.html", context)


@login_required
def drive_setup(request: HttpRequest) -> HttpResponse:
    """The README's Drive setup, where the folders page points when Drive is not configured."""
    return render(request, "web/help_drive.html", {"blocks": readme_section(title=DRIVE_SETUP)})


@login_required
def file_document(request: HttpRequest, file_id: int) -> HttpResponse:
    """A file's extracted text in order, opened at the cited chunk (`?chunk=`), with its original.

    A citation's file may have left its folder since: that says so (a 404, the same as for a
    file the user may not see, so nothing tells them whether it ever existed).
    """
    try:
        file = file_access(user=request.user, file_id=file_id)
    except Http404:
        return render(request, "web/file_removed.html", status=404)
    chunk = _cited_chunk(file, request.GET.get("chunk", ""), request.GET.get("quote", "")[:MAX_QUOTE_CHARS])
    location = chunk.location if chunk is not None else {}
    context = {
        "file": file,
        "chunk": chunk,
        # The page of GET /api/files/{id}/chunks holding the cited chunk: the script loads that first.
        "chunk_page": file_chunk_position(chunk=chunk) // CHUNKS_PAGE_SIZE + 1 if chunk else 1,
        "pdf_page": location.get("page") if isinstance(location.get("page"), int) else None,
        "is_pdf": file.mime_type == "application/pdf",
        # SVG too is shown as an <img>, where it never runs script.
        "is_image": file.mime_type.startswith("image/"),
        # A recording plays from the cited chunk's time (a media fragment, #t=seconds).
        "is_audio": file.mime_type.startswith("audio/"),
        "audio_time": location.get("time") if isinstance(location.get("time"), int) else None,
        "web_view_link": _web_view_link(file.source_extra),
        # Said in place of a viewer, which would show the content endpoint's refusal instead.
        "too_large": file_original_too_large(file=file),
        "content_max_bytes": settings.CONTENT_MAX_BYTES,
    }
    return render(request, "web/document.html", context)


def _cited_chunk(file: File, value: str, quote: str) -> Chunk | None:
    """The file's chunk named by `?chunk=`, else the one holding the cited passage (`?quote=`: a
    re-index gave the passage a new chunk); else nothing (another file's chunk, not a number, past
    a bigint): the page still opens, at the start."""
    chunk = file_chunk_get(file=file, chunk_id=int(value)) if value.isdigit() and len(value) <= 18 else None
    return chunk or file_chunk_quoting(file=file, quote=quote)


def _web_view_link(extra: dict[str, str]) -> str | None:
    """Drive's link to the file, only when it is one: a tampered row must not put javascript: in an href."""
    link = extra.get(WEB_VIEW_LINK, "")
    return link if link.startswith(("https://drive.google.com/", "https://docs.google.com/")) else None

"""Pages to browse, search and manage a folder without chatting, and the organize settings page.

Each renders a shell; its script reads and writes through the REST API. The folder's pages ask
`folder_access` like every endpoint (404 without a role); what the role allows is passed along
so the page offers only the actions the API would accept.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _

from apps.library import selectors
from apps.library.access import folder_access
from apps.library.language import SEARCH_LANGUAGES
from apps.library.models import FileStatus, Folder, FolderRole
from apps.library.services import SYNC_INTERVAL_MAX_SECONDS, SYNC_INTERVAL_MIN_SECONDS

# What the files page's type filter offers: the API's `type` (an extension or a MIME prefix).
FILE_TYPES = [
    ("pdf", "PDF"),
    ("docx", "Word"),
    ("xlsx", "Excel"),
    ("pptx", "PowerPoint"),
    ("md", "Markdown"),
    ("txt", _("Text")),
    ("csv", "CSV"),
    ("html", _("Web page")),
    ("json", "JSON"),
    ("eml", _("Email")),
    ("image/", _("Image")),
]


def _folder_context(request: HttpRequest, folder_id: int, section: str) -> dict[str, object]:
    folder: Folder = folder_access(user=request.user, folder_id=folder_id)
    role = FolderRole(folder.caller_role)  # type: ignore[attr-defined]  # the role folder_access found
    return {
        "folder": folder,
        "section": section,
        "can_edit": role in (FolderRole.EDITOR, FolderRole.OWNER),
        "can_manage": role == FolderRole.OWNER,
    }


@login_required
def folder_files(request: HttpRequest, folder_id: int) -> HttpResponse:
    context = _folder_context(request, folder_id, "files")
    context.update(statuses=FileStatus.choices, file_types=FILE_TYPES)
    return render(request, "web/folder_files.html", context)


# Names for the MIME types the search page's type filter lists (others show as they are).
MIME_LABELS = {
    "application/pdf": "PDF",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PowerPoint",
    "application/vnd.google-apps.document": "Google Docs",
    "application/vnd.google-apps.spreadsheet": "Google Sheets",
    "application/vnd.google-apps.presentation": "Google Slides",
    "text/markdown": "Markdown",
    "text/plain": _("Text"),
    "text/csv": "CSV",
    "text/html": _("Web page"),
    "application/json": "JSON",
    "message/rfc822": _("Email"),
    "image/png": _("PNG image"),
    "image/jpeg": _("JPEG image"),
}

# The keyword search's languages (PostgreSQL's text search configurations) by name in the page's language.
SEARCH_LANGUAGE_NAMES = {
    "simple": _("Any language (words as written)"),
    "arabic": _("Arabic"),
    "armenian": _("Armenian"),
    "basque": _("Basque"),
    "catalan": _("Catalan"),
    "danish": _("Danish"),
    "dutch": _("Dutch"),
    "english": _("English"),
    "finnish": _("Finnish"),
    "french": _("French"),
    "german": _("German"),
    "greek": _("Greek"),
    "hindi": _("Hindi"),
    "hungarian": _("Hungarian"),
    "indonesian": _("Indonesian"),
    "irish": _("Irish"),
    "italian": _("Italian"),
    "lithuanian": _("Lithuanian"),
    "nepali": _("Nepali"),
    "norwegian": _("Norwegian"),
    "portuguese": _("Portuguese"),
    "romanian": _("Romanian"),
    "russian": _("Russian"),
    "serbian": _("Serbian"),
    "spanish": _("Spanish"),
    "swedish": _("Swedish"),
    "tamil": _("Tamil"),
    "turkish": _("Turkish"),
    "yiddish": _("Yiddish"),
}


@login_required
def folder_search(request: HttpRequest, folder_id: int) -> HttpResponse:
    context = _folder_context(request, folder_id, "search")
    mime_types = selectors.folder_file_mime_types(folder_id=folder_id)
    context["mime_types"] = [(mime, MIME_LABELS.get(mime, mime)) for mime in mime_types]
    return render(request, "web/folder_search.html", context)


@login_required
def folder_settings(request: HttpRequest, folder_id: int) -> HttpResponse:
    context = _folder_context(request, folder_id, "settings")
    context.update(
        interval_min_minutes=SYNC_INTERVAL_MIN_SECONDS // 60,
        interval_max_minutes=SYNC_INTERVAL_MAX_SECONDS // 60,
        search_languages=[
            (language, SEARCH_LANGUAGE_NAMES.get(language, language.capitalize())) for language in SEARCH_LANGUAGES
        ],
    )
    return render(request, "web/folder_settings.html", context)


@login_required
def organize_settings(request: HttpRequest) -> HttpResponse:
    return render(request, "web/organize_settings.html")

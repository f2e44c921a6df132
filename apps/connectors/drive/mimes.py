"""Drive mime types shared by the source and its emulator (emulators/drive)."""

from __future__ import annotations

GOOGLE_APPS_PREFIX = "application/vnd.google-apps."
FOLDER = "application/vnd.google-apps.folder"
SHORTCUT = "application/vnd.google-apps.shortcut"
DOCUMENT = "application/vnd.google-apps.document"
SPREADSHEET = "application/vnd.google-apps.spreadsheet"
PRESENTATION = "application/vnd.google-apps.presentation"

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"

# Export formats to request, best first. Markdown keeps headings, which chunking uses; Drive
# added it later than plain text, so plain text is the fallback when a conversion is refused.
# A Sheet as xlsx keeps every tab (CSV is the first tab only) with sheet and cell locations; a
# deck as pptx keeps slide numbers and speaker notes.
EXPORT_FORMATS: dict[str, tuple[str, ...]] = {
    DOCUMENT: ("text/markdown", "text/plain"),
    SPREADSHEET: (XLSX, "text/csv"),
    PRESENTATION: (PPTX, "text/plain"),
}

# What a person downloading a Docs Editors file gets: the Office format, which keeps the layout;
# when Drive refuses that conversion, the indexing formats above in their order.
DOWNLOAD_FORMATS: dict[str, tuple[str, ...]] = {
    DOCUMENT: (DOCX, *EXPORT_FORMATS[DOCUMENT]),
    SPREADSHEET: EXPORT_FORMATS[SPREADSHEET],
    PRESENTATION: EXPORT_FORMATS[PRESENTATION],
}


def is_google_native(mime_type: str) -> bool:
    """Docs Editors files, folders, shortcuts, forms...: no binary content to download."""
    return mime_type.startswith(GOOGLE_APPS_PREFIX)

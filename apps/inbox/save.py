"""The save intent: pasted text becomes a note in the folder's inbox/, a link the page it points to (seed 002).

Both are written through ``inbox_file_save`` (checked, never overwriting, indexed at once, local
and Drive folders alike), so each gets its organization suggestion like any new inbox file. A link
is fetched (``apps.inbox.fetch``): a web page is saved as its main text (trafilatura, as pages are
indexed) under its title, with its address; plain text as it is; a file the index reads (a PDF, a
document) as that file, named after the address.
"""

from __future__ import annotations

import io
from urllib.parse import unquote, urlsplit

from django.utils import timezone
from django.utils.translation import gettext

from apps.core.api import ApplicationError
from apps.inbox.fetch import FetchedPage, url_fetch
from apps.inbox.upload import inbox_file_save
from apps.library.file_names import file_name_from_text
from apps.library.models import Folder
from apps.library.parsing.base import UnsupportedDocument
from apps.library.parsing.text import decode_text
from apps.library.parsing.webpage import page_main_text

MAX_TITLE_CHARS = 80
_HTML = frozenset({"text/html", "application/xhtml+xml"})


def inbox_note_save(*, folder: Folder, text: str, url: str | None = None) -> str:
    """Save the note (or the linked page) into inbox/; returns its path relative to the folder root."""
    if url:
        return _page_save(folder=folder, page=url_fetch(url=url))
    return _save(folder=folder, name=f"note-{_stamp()}.md", data=(text.strip() + "\n").encode())


def _page_save(*, folder: Folder, page: FetchedPage) -> str:
    saved_on = timezone.now().strftime("%Y-%m-%d")
    if page.content_type in _HTML or page.content_type == "text/plain":
        try:
            title, main = page_main_text(page.body) if page.content_type in _HTML else ("", decode_text(page.body))
        except UnsupportedDocument as exc:
            raise ApplicationError(
                gettext("%(url)s is not readable text (%(reason)s); nothing was saved.")
                % {"url": page.url, "reason": exc}
            ) from exc
        if not main.strip():
            raise ApplicationError(
                gettext("%(url)s has no readable text to save; nothing was saved.") % {"url": page.url}
            )
        note = f"# {title or page.url}\n\nSaved from <{page.url}> on {saved_on}.\n\n{main.strip()}\n"
        name = f"{file_name_from_text(title, max_chars=MAX_TITLE_CHARS) or 'page-' + _stamp()}.md"
        return _save(folder=folder, name=name, data=note.encode())
    # Anything else is kept as the file it is, if the index reads its type (the upload checks say).
    last_segment = unquote(urlsplit(page.url).path.rstrip("/").rpartition("/")[2])
    return _save(
        folder=folder,
        name=file_name_from_text(last_segment, max_chars=MAX_TITLE_CHARS) or f"download-{_stamp()}",
        data=page.body,
    )


def _save(*, folder: Folder, name: str, data: bytes) -> str:
    return inbox_file_save(folder=folder, name=name, content=io.BytesIO(data), size=len(data)).path


def _stamp() -> str:
    return timezone.now().strftime("%Y%m%d-%H%M%S")

"""Files put into a folder's inbox/ by a person (upload) or by the assistant (a fetched page).

Everything is checked before one byte reaches the folder: the name is a plain file name, the
size is under ``INBOX_UPLOAD_MAX_BYTES``, the type is read from the content (``filetype``'s
signatures; no signature and no NUL byte is text) and must be one the index reads, a name whose
extension says another type is refused, and zip-based documents pass the zip bomb checks. The
source then writes it without overwriting (``W2.pdf`` taken: ``W2 (2).pdf``) and it is indexed
at once; its suggestion card follows from the inbox's usual digest hook.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

import filetype
from django.conf import settings
from django.utils.translation import gettext, gettext_lazy
from rest_framework import status

from apps.core.api import ApplicationError
from apps.core.stored_messages import message_shown
from apps.library.arrivals import file_arrived
from apps.library.file_names import file_name_problem
from apps.library.models import Folder
from apps.library.parsing import PARSERS, document_kind, read_as_text
from apps.library.parsing.base import ParseError, UnsupportedDocument
from apps.library.parsing.packages import package_check
from apps.library.sources import SourceError, SourceTransientError, source_for
from apps.organize.paths import INBOX

SNIFF_BYTES = 8192
_XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
_PACKAGES = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word document",
    _XLSX: "Excel workbook",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PowerPoint deck",
    "application/vnd.oasis.opendocument.text": "OpenDocument text",
    "application/vnd.oasis.opendocument.spreadsheet": "OpenDocument spreadsheet",
    "application/vnd.oasis.opendocument.presentation": "OpenDocument presentation",
    "application/epub+zip": "epub book",
}
# What a refused signature is, in words a person knows.
_DESCRIBED = {
    "application/x-executable": gettext_lazy("an executable program"),
    "application/x-msdownload": gettext_lazy("a Windows program"),
    "application/x-sharedlib": gettext_lazy("a shared library"),
    "application/zip": gettext_lazy("a zip archive (unpack it and upload the files inside)"),
    "application/octet-stream": gettext_lazy("binary data of an unknown kind"),
}
# The content's type where the name says a close relative of it (same signature).
_SAME = {
    "application/vnd.ms-excel.sheet.macroenabled.12": _XLSX,
    "image/jpg": "image/jpeg",
    "image/pjpeg": "image/jpeg",
    "text/rtf": "application/rtf",
}
# Formats without a signature: text, and what parsers read as text with structure.
_TEXT_FORMATS = frozenset(
    {"application/json", "application/xhtml+xml", "application/rtf", "text/rtf", "message/rfc822"}
)


class UploadTooLargeError(ApplicationError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


class UnsupportedUploadError(ApplicationError):
    status_code = status.HTTP_415_UNSUPPORTED_MEDIA_TYPE


class SourceUnavailableError(ApplicationError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE


@dataclass(frozen=True)
class SavedFile:
    path: str
    mime_type: str
    size: int
    file_id: int | None  # None: the folder's exclude patterns keep the path out of the index


def upload_name_clean(*, name: str) -> str:
    """A plain file name for inbox/ (``file_name_problem``); ApplicationError (400) otherwise, never repaired."""
    text = name.strip()
    problem = file_name_problem(text)
    if problem:
        raise ApplicationError(problem)
    return text


def upload_type(*, head: bytes, name: str) -> str:
    """The content type the file is indexed as, read from its first bytes; 415 when refused."""
    sniffed = filetype.guess_mime(head)
    named = document_kind(mime_type="", name=name)
    named = _SAME.get(named, named)
    if sniffed is None:
        if b"\x00" in head:
            raise UnsupportedUploadError(
                gettext("%(name)s is binary data of an unknown kind; it cannot be indexed.") % {"name": name}
            )
        if not named:
            return "text/plain"
        if not (read_as_text(named) or named in _TEXT_FORMATS):
            raise UnsupportedUploadError(
                gettext("%(name)s is plain text, but its name says %(named)s; rename it to match what it holds.")
                % {"name": name, "named": named}
            )
        return named
    if sniffed not in PARSERS:
        raise UnsupportedUploadError(
            gettext("%(name)s is %(kind)s; it cannot be indexed.")
            % {"name": name, "kind": _DESCRIBED.get(sniffed, sniffed)}
        )
    if named and named != sniffed:
        raise UnsupportedUploadError(
            gettext("%(name)s holds %(sniffed)s, but its name says %(named)s; rename it to match what it holds.")
            % {"name": name, "sniffed": sniffed, "named": named}
        )
    return sniffed


def inbox_file_save(*, folder: Folder, name: str, content: BinaryIO, size: int) -> SavedFile:
    """Check the file (see the module), write it into the folder's inbox/ and queue its indexing."""
    name = upload_name_clean(name=name)
    limit = settings.INBOX_UPLOAD_MAX_BYTES
    if size > limit:
        raise UploadTooLargeError(
            gettext("%(name)s is %(size)s bytes; uploads may be at most %(limit)s bytes (INBOX_UPLOAD_MAX_BYTES).")
            % {"name": name, "size": f"{size:,}", "limit": f"{limit:,}"}
        )
    if size == 0:
        raise ApplicationError(gettext("%(name)s is empty.") % {"name": name})
    content.seek(0)
    mime_type = upload_type(head=content.read(SNIFF_BYTES), name=name)
    if mime_type in _PACKAGES:
        try:
            package_check(content, kind=_PACKAGES[mime_type])
        except (ParseError, UnsupportedDocument) as exc:
            raise UnsupportedUploadError(
                gettext("%(name)s was refused: %(reason)s.") % {"name": name, "reason": exc}
            ) from exc
    content.seek(0)
    try:
        entry = source_for(folder=folder).write_file(INBOX, name, content, mime_type)
    except SourceTransientError as exc:
        raise SourceUnavailableError(
            gettext("%(name)s was not saved: %(reason)s Try again in a minute.")
            % {"name": name, "reason": message_shown(exc)}
        ) from exc
    except SourceError as exc:
        raise ApplicationError(
            gettext("%(name)s was not saved: %(reason)s") % {"name": name, "reason": message_shown(exc)}
        ) from exc
    file = file_arrived(folder=folder, entry=entry)
    return SavedFile(path=entry.path, mime_type=mime_type, size=entry.size, file_id=file.pk if file else None)

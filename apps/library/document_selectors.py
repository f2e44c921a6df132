"""Reads behind the document page: a file's original bytes from its source, its chunks in order."""

from __future__ import annotations

import re

from django.conf import settings
from django.db.models import QuerySet
from django.http import Http404
from django.utils.translation import gettext as _
from rest_framework import status

from apps.core.api import ApplicationError, ConflictError
from apps.core.stored_messages import message_shown
from apps.library.models import Chunk, File, SourceKind
from apps.library.sources import (
    FetchedOriginal,
    OriginalContent,
    SourceAuthError,
    SourceError,
    SourceNotFoundError,
    SourceTransientError,
    source_entry_of,
    source_for,
)

# Chunks per page of GET /api/files/{id}/chunks, by default; the document page finds a cited
# chunk's page with it.
CHUNKS_PAGE_SIZE = 50
# Google Docs, Sheets, Slides...: files that exist only in Drive and are exported to be downloaded.
_DRIVE_EDITORS_PREFIX = "application/vnd.google-apps."


class OriginalRefused(ApplicationError):
    """The source will not hand this path out (it leads outside the folder, or is no regular file)."""

    status_code = status.HTTP_403_FORBIDDEN


class SourceUnavailable(ApplicationError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE


def file_original_open(*, file: File) -> OriginalContent | FetchedOriginal:
    """The file's original bytes, read from its folder's source now (what the index holds may be older)."""
    try:
        return source_for(folder=file.folder).open_original(source_entry_of(file))
    except SourceNotFoundError as exc:
        raise Http404(
            _("%(path)s is no longer in its folder (%(reason)s).") % {"path": file.path, "reason": message_shown(exc)}
        ) from exc
    except SourceAuthError as exc:
        raise ConflictError(message_shown(exc)) from exc
    except SourceTransientError as exc:
        raise SourceUnavailable(message_shown(exc)) from exc
    except SourceError as exc:
        raise OriginalRefused(
            _("Refused to open %(path)s: %(reason)s") % {"path": file.path, "reason": message_shown(exc)}
        ) from exc


def file_original_too_large(*, file: File) -> bool:
    """Whether GET /api/files/{id}/content will refuse the file whole (413), as far as its row tells:
    a Drive file's own bytes are fetched and capped, while a Docs Editors file is served as an export,
    made whole whatever its size. The row may lag Drive; the endpoint asks Drive for the size it sends."""
    return (
        file.folder.source == SourceKind.DRIVE
        and not file.mime_type.startswith(_DRIVE_EDITORS_PREFIX)
        and file.size > settings.CONTENT_MAX_BYTES
    )


def file_chunks(*, file: File) -> QuerySet[Chunk]:
    """The file's chunks in document order, without their vectors."""
    return (
        Chunk.objects.filter(folder_id=file.folder_id, file_id=file.pk)
        .order_by("chunk_index")
        .defer("embedding", "search_vector")
    )


def file_chunk_get(*, file: File, chunk_id: int) -> Chunk | None:
    return file_chunks(file=file).filter(pk=chunk_id).first()


# How many words of a quoted passage's start or end must still match when the whole no longer does.
QUOTE_PART_WORDS = 8


def file_chunk_quoting(*, file: File, quote: str) -> Chunk | None:
    """The file's first chunk holding a cited passage, for a citation whose chunk a re-index replaced.

    The same chunker cuts the same text the same way, so the whole quote usually matches; after a
    change of chunk size the passage may straddle two new chunks, so its start, then its end, will do.
    Whitespace may differ (the quote came through a URL): any run of it matches any other.
    """
    words = quote.split()
    if not words:
        return None
    parts = [words]
    if len(words) > 2 * QUOTE_PART_WORDS:
        parts += [words[:QUOTE_PART_WORDS], words[-QUOTE_PART_WORDS:]]
    for part in parts:
        pattern = r"\s+".join(re.escape(word) for word in part)
        found = file_chunks(file=file).filter(text__regex=pattern).first()
        if found is not None:
            return found
    return None


def file_chunk_position(*, chunk: Chunk) -> int:
    """How many of its file's chunks come before `chunk`: which page of the chunk list holds it."""
    return Chunk.objects.filter(
        folder_id=chunk.folder_id, file_id=chunk.file_id, chunk_index__lt=chunk.chunk_index
    ).count()

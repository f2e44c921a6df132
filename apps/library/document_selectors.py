"""Reads behind the document page: a file's original bytes from its source, its chunks in order."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404
from rest_framework import status

from apps.core.api import ApplicationError, ConflictError
from apps.library.models import Chunk, File
from apps.library.sources import (
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


class OriginalRefused(ApplicationError):
    """The source will not hand this path out (it leads outside the folder, or is no regular file)."""

    status_code = status.HTTP_403_FORBIDDEN


class SourceUnavailable(ApplicationError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE


def file_original_open(*, file: File) -> OriginalContent:
    """The file's original bytes, read from its folder's source now (what the index holds may be older)."""
    try:
        return source_for(folder=file.folder).open_original(source_entry_of(file))
    except SourceNotFoundError as exc:
        raise Http404(f"{file.path} is no longer in its folder ({exc}).") from exc
    except SourceAuthError as exc:
        raise ConflictError(str(exc)) from exc
    except SourceTransientError as exc:
        raise SourceUnavailable(str(exc)) from exc
    except SourceError as exc:
        raise OriginalRefused(f"Refused to open {file.path}: {exc}") from exc


def file_chunks(*, file: File) -> QuerySet[Chunk]:
    """The file's chunks in document order, without their vectors."""
    return Chunk.objects.filter(file_id=file.pk).order_by("chunk_index").defer("embedding", "search_vector")


def file_chunk_get(*, file: File, chunk_id: int) -> Chunk | None:
    return file_chunks(file=file).filter(pk=chunk_id).first()


def file_chunk_position(*, chunk: Chunk) -> int:
    """How many of its file's chunks come before `chunk`: which page of the chunk list holds it."""
    return Chunk.objects.filter(file_id=chunk.file_id, chunk_index__lt=chunk.chunk_index).count()

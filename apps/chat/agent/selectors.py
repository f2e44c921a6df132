"""Reads the agent's tools make. Every one is scoped by `folder_id`: that filter is the tools'
authorization, so a file of another folder is indistinguishable from a missing one."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Max, Min, Q, QuerySet

from apps.library.models import Chunk, File, Folder

_FILE_FIELDS_UNUSED = ("embedding", "search_vector", "preview")


@dataclass(frozen=True)
class Block:
    chunk_id: int
    chunk_index: int
    text: str
    location: dict[str, Any]


def folder_file_get(*, folder_id: int, file_id: int) -> File | None:
    return folder_files(folder_id).filter(pk=file_id).first()


def folder_files_get(*, folder_id: int, file_ids: list[int]) -> dict[int, File]:
    return {file.pk: file for file in folder_files(folder_id).filter(pk__in=file_ids)}


def file_blocks(*, folder_id: int, file_id: int, limit: int) -> list[Block]:
    """The file's chunks in document order, at most `limit`."""
    rows = (
        Chunk.objects.filter(file_id=file_id, folder_id=folder_id)
        .order_by("chunk_index")
        .values_list("id", "chunk_index", "text", "location")[:limit]
    )
    return [Block(chunk_id=row[0], chunk_index=row[1], text=row[2], location=row[3] or {}) for row in rows]


def file_type_q(kind: str) -> Q:
    """Files of a kind, as the tools' `type` argument gives it: a MIME type ("application/pdf"),
    a prefix ("image/") or an extension ("pdf", ".pdf")."""
    if "/" not in kind:
        return Q(name__iendswith="." + kind.lstrip("."))
    return Q(mime_type__istartswith=kind) if kind.endswith("/") else Q(mime_type__iexact=kind)


def folder_recent_files(*, folder_id: int, limit: int, file_type: str | None = None) -> list[File]:
    """Newest first by modification time, optionally of one kind (see `file_type_q`)."""
    files = folder_files(folder_id)
    if file_type:
        files = files.filter(file_type_q(file_type))
    return list(files.order_by("-modified_time", "-id")[:limit])


def folder_files_modified_between(*, folder_id: int, after: dt.datetime, before: dt.datetime, limit: int) -> list[File]:
    files = folder_files(folder_id).filter(modified_time__gte=after, modified_time__lt=before)
    return list(files.order_by("-modified_time", "-id")[:limit])


def folder_stats(*, folder_id: int) -> dict[str, Any] | None:
    folder = Folder.objects.filter(pk=folder_id).first()
    if folder is None:
        return None
    files = File.objects.filter(folder_id=folder_id)
    by_status = dict(files.values_list("status").annotate(count=Count("id")).order_by())
    by_type = files.values_list("mime_type").annotate(count=Count("id")).order_by("-count", "mime_type")[:10]
    span = files.aggregate(oldest=Min("modified_time"), newest=Max("modified_time"))
    return {
        "folder_name": folder.name,
        "status": folder.status,
        "files": sum(by_status.values()),
        "files_by_status": by_status,
        "chunks": Chunk.objects.filter(folder_id=folder_id).count(),
        "top_mime_types": {mime or "unknown": count for mime, count in by_type},
        "oldest_modified": span["oldest"],
        "newest_modified": span["newest"],
        "last_synced_at": folder.last_synced_at,
    }


def folder_files(folder_id: int) -> QuerySet[File]:
    """The folder's files, without the columns no tool reads (vectors, preview)."""
    return File.objects.filter(folder_id=folder_id).defer(*_FILE_FIELDS_UNUSED)

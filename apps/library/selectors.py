"""Reads of folders, files and chunks: those of the library's endpoints (scoped to an owner), and
those other apps need (scoped by `folder_id`: for the agents' tools that filter is their
authorization, so a file of another folder is indistinguishable from a missing one)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis
from django.db import connection
from django.db.models import Count, F, Max, Min, Q, QuerySet
from django.db.models.functions import Collate, Upper

from apps.core.events import folder_channel, last_event_id
from apps.library.models import Chunk, File, FileStatus, Folder

_FILE_FIELDS_UNUSED = ("embedding", "search_vector", "preview")

# Per directory: how many files sit directly in it (a file at the root has no directory).
_DIRECTORIES_SQL = """
SELECT parent, COUNT(*) FROM (
    SELECT array_to_string(trim_array(string_to_array(path, '/'), 1), '/') AS parent
    FROM library_file WHERE folder_id = %(folder_id)s
) AS files
WHERE parent <> ''
GROUP BY parent
"""

# Cosine similarity of one file to the centroid of each directory (and each top-level folder,
# whose centroid covers its whole subtree). The file's own vector is read in the statement, so
# no vector ever travels as a parameter.
_SIMILARITY_SQL = """
WITH target AS (
    SELECT embedding FROM library_file WHERE id = %(file_id)s AND folder_id = %(folder_id)s
), others AS (
    SELECT array_to_string(trim_array(string_to_array(path, '/'), 1), '/') AS parent,
           split_part(path, '/', 1) AS top,
           embedding
    FROM library_file
    WHERE folder_id = %(folder_id)s AND id <> %(file_id)s AND embedding IS NOT NULL
      AND strpos(path, '/') > 0 AND NOT starts_with(path, %(excluded_prefix)s)
)
SELECT parent, COUNT(*), 1 - (AVG(embedding) <=> (SELECT embedding FROM target)) FROM others GROUP BY parent
UNION ALL
SELECT top, COUNT(*), 1 - (AVG(embedding) <=> (SELECT embedding FROM target)) FROM others GROUP BY top
"""


@dataclass(frozen=True)
class Block:
    chunk_id: int
    chunk_index: int
    text: str
    location: dict[str, Any]


# -- owned by the caller (endpoints) -----------------------------------------------------------


def folder_events_position(*, folder_id: int) -> str:
    """The newest event id of the folder's stream ("0" when none, or when Redis cannot say)."""
    try:
        return last_event_id(channel=folder_channel(folder_id))
    except redis.RedisError:
        return "0"


def folder_files_in_progress(*, folder_id: int, limit: int = 20) -> list[tuple[str, dt.datetime | None]]:
    """The files a worker is indexing right now (claimed), longest-running first, with since when."""
    rows = File.objects.filter(folder_id=folder_id, status=FileStatus.INDEXING).order_by("index_started_at", "path")
    return list(rows.values_list("path", "index_started_at")[:limit])


# What a file list may be sorted by (API name: column); each with the path then the id after it,
# so that pages never repeat or skip a row of equal keys.
FILE_ORDERINGS = {
    "path": "path_bytes",
    "name": "name_upper",
    "type": "mime_type",
    "size": "size",
    "modified": "modified_time",
    "status": "status",
    "chunks": "chunk_count",
}


def file_list(
    *,
    folder: Folder,
    status: str | None = None,
    path_prefix: str | None = None,
    file_type: str | None = None,
    name: str | None = None,
    ordering: str = "path",
) -> QuerySet[File]:
    """The folder's files, filtered: `file_type` as `file_type_q` reads it, `name` a part of the
    file name (any case); sorted by a key of FILE_ORDERINGS, "-" in front for descending."""
    # Paths compare byte by byte (collation "C"): one index (files_page_indexes) then serves both the
    # order and a directory's prefix, which LIKE can use an index for under "C" only. Names compare
    # in upper case, as `icontains` and `iendswith` do, for the same index on UPPER(name).
    files = File.objects.filter(folder=folder).alias(path_bytes=Collate("path", "C"), name_upper=Upper("name"))
    if status:
        files = files.filter(status=status)
    if path_prefix:
        files = files.filter(path_bytes__startswith=path_prefix)
    if file_type:
        files = files.filter(file_type_q(file_type))
    if name:
        files = files.filter(name__icontains=name)
    descending = ordering.startswith("-")
    column = FILE_ORDERINGS[ordering.lstrip("-")]
    ties = ["path_bytes", "id"] if column != "path_bytes" else ["id"]
    if descending:
        # A file without a modification time sorts last either way (PostgreSQL puts NULLs first
        # in DESC); the files page index on modified_time is in this order: a page reads 50 rows.
        nulls_last = True if column == "modified_time" else None
        order = [F(column).desc(nulls_last=nulls_last), *(F(key).desc() for key in ties)]
    else:
        order = [F(column).asc(), *(F(key).asc() for key in ties)]
    return files.order_by(*order).defer(*_FILE_FIELDS_UNUSED)


# -- one folder's files (agents, inbox, organize) -----------------------------------------------


def folder_files(*, folder_id: int) -> QuerySet[File]:
    """The folder's files, without the columns no tool reads (vectors, preview)."""
    return File.objects.filter(folder_id=folder_id).defer(*_FILE_FIELDS_UNUSED)


def folder_file_get(*, folder_id: int, file_id: int) -> File | None:
    return folder_files(folder_id=folder_id).filter(pk=file_id).first()


def folder_files_get(*, folder_id: int, file_ids: Sequence[int]) -> dict[int, File]:
    return {file.pk: file for file in folder_files(folder_id=folder_id).filter(pk__in=file_ids)}


def folder_file_get_by_path(*, folder_id: int, path: str) -> File | None:
    return folder_files(folder_id=folder_id).filter(path=path).first()


def folder_files_get_by_path(*, folder_id: int, paths: Sequence[str]) -> dict[str, File]:
    return {file.path: file for file in folder_files(folder_id=folder_id).filter(path__in=paths)}


def folder_files_named(*, folder_id: int, names: Sequence[str]) -> list[File]:
    """Files called any of `names`, wherever they are in the folder, by path."""
    return list(folder_files(folder_id=folder_id).filter(name__in=names).order_by("path"))


def folder_files_under(*, folder_id: int, prefix: str, limit: int) -> list[File]:
    """Files whose path starts with `prefix`, by path, at most `limit`."""
    return list(folder_files(folder_id=folder_id).filter(path__startswith=prefix).order_by("path")[:limit])


def folder_file_exists(*, folder_id: int, path: str) -> bool:
    return File.objects.filter(folder_id=folder_id, path=path).exists()


def file_with_folder_get(*, file_id: int, folder_id: int | None = None) -> File | None:
    """The file with its folder (and its embedding), within `folder_id` when given."""
    files = File.objects.select_related("folder").defer("search_vector").filter(pk=file_id)
    if folder_id is not None:
        files = files.filter(folder_id=folder_id)
    return files.first()


def file_folder_id_get(*, file_id: int) -> int | None:
    return File.objects.filter(pk=file_id).values_list("folder_id", flat=True).first()


def file_embedding_get(*, file_id: int) -> Any:
    """The file's digest embedding, or None (not embedded, or no such file)."""
    return File.objects.filter(pk=file_id).values_list("embedding", flat=True).first()


def file_type_q(kind: str) -> Q:
    """Files of a kind, as the tools' `type` argument gives it: a MIME type ("application/pdf"),
    a prefix ("image/") or an extension ("pdf", ".pdf")."""
    if "/" not in kind:
        return Q(name__iendswith="." + kind.lstrip("."))
    return Q(mime_type__istartswith=kind) if kind.endswith("/") else Q(mime_type__iexact=kind)


def folder_mime_types(*, folder_id: int, kind: str) -> tuple[str, ...]:
    """The folder's MIME types of a kind (see `file_type_q`)."""
    files = File.objects.filter(file_type_q(kind), folder_id=folder_id).exclude(mime_type="")
    return tuple(sorted(set(files.values_list("mime_type", flat=True))))


def folder_recent_files(*, folder_id: int, limit: int, file_type: str | None = None) -> list[File]:
    """Newest first by modification time, optionally of one kind (see `file_type_q`)."""
    files = folder_files(folder_id=folder_id)
    if file_type:
        files = files.filter(file_type_q(file_type))
    return list(files.order_by("-modified_time", "-id")[:limit])


def folder_files_modified_between(*, folder_id: int, after: dt.datetime, before: dt.datetime, limit: int) -> list[File]:
    files = folder_files(folder_id=folder_id).filter(modified_time__gte=after, modified_time__lt=before)
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


def folder_directory_counts(*, folder_id: int) -> list[tuple[str, int]]:
    """(directory, files directly in it) for every directory holding files; one statement."""
    with connection.cursor() as cursor:
        cursor.execute(_DIRECTORIES_SQL, {"folder_id": folder_id})
        return [(str(parent), int(count)) for parent, count in cursor.fetchall()]


def folder_centroid_similarities(
    *, folder_id: int, file_id: int, excluded_prefix: str
) -> list[tuple[str, int, float | None]]:
    """(directory or top-level folder, files, cosine similarity of the file to their centroid),
    files under `excluded_prefix` left out; empty similarity when the file has no embedding."""
    with connection.cursor() as cursor:
        cursor.execute(
            _SIMILARITY_SQL, {"folder_id": folder_id, "file_id": file_id, "excluded_prefix": excluded_prefix}
        )
        return list(cursor.fetchall())


# -- chunks --------------------------------------------------------------------------------------


def file_blocks(*, folder_id: int, file_id: int, limit: int) -> list[Block]:
    """The file's chunks in document order, at most `limit`."""
    rows = (
        Chunk.objects.filter(file_id=file_id, folder_id=folder_id)
        .order_by("chunk_index")
        .values_list("id", "chunk_index", "text", "location")[:limit]
    )
    return [Block(chunk_id=row[0], chunk_index=row[1], text=row[2], location=row[3] or {}) for row in rows]


def file_chunk_texts(*, file_id: int) -> list[str]:
    """The file's indexed text, chunk by chunk in document order."""
    return list(Chunk.objects.filter(file_id=file_id).order_by("chunk_index").values_list("text", flat=True))


def folder_file_mime_types(*, folder_id: int) -> list[str]:
    """The MIME types the folder's files have, sorted (the search page's type filter)."""
    types = File.objects.filter(folder_id=folder_id).exclude(mime_type="").values_list("mime_type", flat=True)
    return sorted(set(types.distinct()))

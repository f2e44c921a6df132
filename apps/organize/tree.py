"""The folder tree as the index knows it, and how much a file resembles what each folder holds.

Both come from `library_file` in one statement each, scoped to one folder, with bound parameters.
Folders are paths ending in ``/``; files under ``inbox/`` are unsorted and never count as
evidence of what a folder is for.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from apps.organize.paths import INBOX

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
      AND strpos(path, '/') > 0 AND NOT starts_with(path, %(inbox)s)
)
SELECT parent, COUNT(*), 1 - (AVG(embedding) <=> (SELECT embedding FROM target)) FROM others GROUP BY parent
UNION ALL
SELECT top, COUNT(*), 1 - (AVG(embedding) <=> (SELECT embedding FROM target)) FROM others GROUP BY top
"""


@dataclass(frozen=True)
class TreeFolder:
    path: str  # "taxes/2024/"
    files: int  # in it and below it


@dataclass(frozen=True)
class FolderSimilarity:
    similarity: float  # cosine similarity to the folder's centroid
    files: int


def folder_tree(*, folder_id: int, depth: int = 3) -> list[TreeFolder]:
    """Every directory holding files (and its ancestors) down to ``depth``, hidden ones left out."""
    with connection.cursor() as cursor:
        cursor.execute(_DIRECTORIES_SQL, {"folder_id": folder_id})
        rows = cursor.fetchall()
    totals: dict[str, int] = {}
    for parent, count in rows:
        segments = parent.split("/")
        if any(segment.startswith(".") for segment in segments):
            continue
        for level in range(1, min(len(segments), depth) + 1):
            path = "/".join(segments[:level]) + "/"
            totals[path] = totals.get(path, 0) + count
    return [TreeFolder(path=path, files=files) for path, files in sorted(totals.items())]


def folder_similarities(*, folder_id: int, file_id: int) -> dict[str, FolderSimilarity]:
    """By folder path; empty when the file has no embedding (skipped, or not indexed yet)."""
    with connection.cursor() as cursor:
        cursor.execute(_SIMILARITY_SQL, {"folder_id": folder_id, "file_id": file_id, "inbox": INBOX})
        rows = cursor.fetchall()
    return {
        f"{path}/": FolderSimilarity(similarity=float(similarity), files=count)
        for path, count, similarity in rows
        if similarity is not None
    }


def target_folders(tree: list[TreeFolder]) -> list[str]:
    """Folders a file may be sorted into: everything but the inbox itself and what is under it."""
    return [folder.path for folder in tree if not folder.path.startswith(INBOX)]

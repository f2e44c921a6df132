"""The folder tree as the index knows it, and how much a file resembles what each folder holds.

Both come from the library's selectors, one statement each, scoped to one folder.
Folders are paths ending in ``/``; files under ``inbox/`` are unsorted and never count as
evidence of what a folder is for.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.library.selectors import folder_centroid_similarities, folder_directory_counts
from apps.organize.paths import INBOX


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
    rows = folder_directory_counts(folder_id=folder_id)
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
    rows = folder_centroid_similarities(folder_id=folder_id, file_id=file_id, excluded_prefix=INBOX)
    return {
        f"{path}/": FolderSimilarity(similarity=float(similarity), files=count)
        for path, count, similarity in rows
        if similarity is not None
    }


def target_folders(tree: list[TreeFolder]) -> list[str]:
    """Folders a file may be sorted into: everything but the inbox itself and what is under it."""
    return [folder.path for folder in tree if not folder.path.startswith(INBOX)]

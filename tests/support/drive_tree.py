"""Drive test trees and the checks the Drive suites share (fixtures are in tests/drive/conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass

from apps.library.models import Chunk, File, Folder, SyncLog
from apps.library.sync import folder_sync

# About 700 tokens: several chunks per file, so a lost or doubled chunk shows in the counts.
LONG_TEXT = " ".join(f"Clause {n} of the lease says the rent is due on day {n % 28 + 1}." for n in range(60))


def long_text(tag: str) -> bytes:
    return f"{tag}. {LONG_TEXT}".encode()


@dataclass
class Tree:
    """Lease/{lease.txt, notes.txt, a/{deep.txt}, b/, doc (Google Doc)} and Elsewhere/ outside it."""

    root: str
    lease: str
    notes: str
    a: str
    deep: str
    b: str
    doc: str
    elsewhere: str


def run_sync(folder: Folder, capture) -> SyncLog | None:
    """``folder_sync`` with its on-commit work (index tasks, inline here) run afterwards."""
    with capture(execute=True):
        return folder_sync(folder_id=folder.pk)


def chunk_ids(folder: Folder) -> dict[str, set[int]]:
    """Chunk ids per file path: a kept file keeps exactly these, a re-indexed one gets a new set."""
    ids: dict[str, set[int]] = {}
    for path, chunk_id in Chunk.objects.filter(folder=folder).values_list("file__path", "id"):
        ids.setdefault(path, set()).add(chunk_id)
    return ids


def assert_chunks_consistent(folder: Folder) -> None:
    """Every indexed file has exactly its chunk_count chunks, numbered 0..n-1; no other file has any."""
    files = list(File.objects.filter(folder=folder))
    assert files, "no files to check"
    for file in files:
        indexes = sorted(Chunk.objects.filter(file=file).values_list("chunk_index", flat=True))
        if file.status == "indexed":
            assert indexes == list(range(file.chunk_count)), file.path
            assert file.chunk_count > 0, file.path
        elif file.status in ("skipped", "failed"):
            assert indexes == [], file.path
    assert not Chunk.objects.filter(folder=folder).exclude(file__folder=folder).exists()


def paths(folder: Folder) -> set[str]:
    return set(File.objects.filter(folder=folder).values_list("path", flat=True))

"""Files of a local folder as rows pointing at what is on disk (or at what must never be served)."""

from __future__ import annotations

from apps.library.models import Chunk, File, Folder


def file_row(*, folder: Folder, path: str, mime_type: str = "text/plain", size: int = 0) -> File:
    """A listed file at `path` (relative, or anything a tampered row could hold) without reading it."""
    return File.objects.create(
        folder=folder,
        external_id=path,
        path=path,
        name=path.rsplit("/", 1)[-1] or path,
        mime_type=mime_type,
        size=size,
        status="indexed",
    )


def add_chunks(*, file: File, chunks: list[tuple[str, dict]]) -> list[Chunk]:
    """Chunks in document order (no vectors: these tests read text and locations only)."""
    made = Chunk.objects.bulk_create(
        Chunk(file=file, folder_id=file.folder_id, chunk_index=index, text=text, location=location)
        for index, (text, location) in enumerate(chunks)
    )
    File.objects.filter(pk=file.pk).update(chunk_count=len(chunks))
    return made


def body(response) -> bytes:
    """A response's bytes, streamed or not."""
    return b"".join(response.streaming_content) if response.streaming else response.content

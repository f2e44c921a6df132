"""Folders whose files have known chunks (hash-embedded), written straight to the database."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from apps.embeddings.providers import get_embedder
from apps.library.models import Chunk, File, Folder


def add_file(*, folder: Folder, path: str, chunks: list[tuple[str, dict]]) -> File:
    file = File.objects.create(
        folder=folder,
        external_id=path,
        path=path,
        name=path.rsplit("/", 1)[-1],
        status="indexed",
        chunk_count=len(chunks),
    )
    vectors = get_embedder("hash").embed_documents([text for text, _ in chunks])
    Chunk.objects.bulk_create(
        Chunk(
            file=file,
            folder=folder,
            chunk_index=index,
            text=text,
            location=location,
            embedding=vector.tolist(),
            token_count=len(text.split()),
        )
        for index, ((text, location), vector) in enumerate(zip(chunks, vectors, strict=True))
    )
    return file


def add_dated_file(*, folder: Folder, path: str, modified: dt.date, chunks: list[tuple[str, dict]]) -> File:
    file = add_file(folder=folder, path=path, chunks=chunks)
    file.modified_time = dt.datetime.combine(modified, dt.time(12), tzinfo=dt.UTC)
    file.mime_type = {"pdf": "application/pdf", "md": "text/markdown"}.get(path.rsplit(".", 1)[-1], "text/plain")
    file.size = sum(len(text) for text, _ in chunks)
    file.save(update_fields=["modified_time", "mime_type", "size"])
    return file


def make_folder(owner, name: str = "notes") -> Folder:
    return Folder.objects.create(
        owner=owner,
        source="local",
        external_id=f"/tmp/chat-tests/{name}-{owner.pk}",
        name=name,
        status="ready",
        last_synced_at=timezone.now(),
    )

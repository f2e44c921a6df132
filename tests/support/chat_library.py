"""Folders whose files have known chunks (hash-embedded), and answers citing them, written straight
to the database."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from apps.chat.models import AgentRun, Message
from apps.chat.prompts import SNIPPET_CHARS
from apps.chat.types import Citation
from apps.embeddings.providers import get_embedder
from apps.library.models import Chunk, File, Folder

# Three files whose chunks answer distinct questions, so each citation can point at only one of them.
THREE_FILES: dict[str, list[tuple[str, dict]]] = {
    "finance/W2_2024.pdf": [
        ("The W-2 form for 2024 reports total wages of 84,500 dollars paid by Acme Corporation.", {"page": 1}),
        ("Federal income tax withheld on the 2024 W-2 was 12,300 dollars.", {"page": 2}),
    ],
    "recipes/pancakes.md": [
        ("Pancakes need two cups of flour, two eggs and one and a half cups of milk.", {"heading": "Ingredients"}),
    ],
    "travel/passport.txt": [
        ("The passport renewal appointment is booked at the consulate on March 3.", {}),
    ],
}


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


def add_cited_answer(*, run, files: list[File]) -> Message:
    """A saved answer to the run's question citing the first chunk of each file, `[1]`, `[2]`, ..."""
    answer = add_cited_message(conversation_id=run.conversation_id, files=files)
    AgentRun.objects.filter(pk=run.pk).update(answer=answer, status="completed", finished_at=timezone.now())
    return answer


def add_cited_message(*, conversation_id: int, files: list[File]) -> Message:
    """An agent message citing the first chunk of each file, `[1]`, `[2]`, ..., without a run (an
    inbox answer as the page and the API read it back)."""
    citations = []
    for n, file in enumerate(files, start=1):
        chunk = file.chunks.order_by("chunk_index").first()
        citations.append(
            Citation(
                n=n,
                file_id=file.pk,
                file_name=file.name,
                path=file.path,
                location="",
                chunk_id=chunk.pk,
                snippet=chunk.text[:SNIPPET_CHARS],
            ).as_dict()
        )
    text = " ".join(f"Passage [{n}]." for n in range(1, len(files) + 1))
    return Message.objects.create(
        conversation_id=conversation_id, role="agent", content={"text": text, "citations": citations}
    )

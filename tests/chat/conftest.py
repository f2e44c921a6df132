"""Chat fixtures: a folder with known chunks, providers, and a real ASGI server on the test database."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.utils import timezone

from apps.embeddings.providers import get_embedder
from apps.library.models import Chunk, File, Folder
from tests.support.fixtures import fresh_throttle_counts  # noqa: F401  (autouse)
from tests.support.servers import BASE_DIR, RunningServer, start_uvicorn, test_database_env

# Three files whose chunks answer distinct questions, so each citation can point at only one of them.
LIBRARY = {
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


@dataclass
class Library:
    folder: Folder
    files: dict[str, File]


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


def make_folder(owner, name: str = "notes") -> Folder:
    return Folder.objects.create(
        owner=owner,
        source="local",
        external_id=f"/tmp/chat-tests/{name}-{owner.pk}",
        name=name,
        status="ready",
        last_synced_at=timezone.now(),
    )


@pytest.fixture
def library(user) -> Library:
    folder = make_folder(user)
    return Library(
        folder=folder,
        files={path: add_file(folder=folder, path=path, chunks=chunks) for path, chunks in LIBRARY.items()},
    )


HEARTBEAT_SECONDS = 0.3


@pytest.fixture(scope="session")
def asgi_server(django_db_setup, django_db_blocker) -> Iterator[RunningServer]:
    """uvicorn serving config.asgi on the test database (tests using it must be transactional)."""
    env = test_database_env(
        EMBEDDING_PROVIDER="hash",
        LLM_PROVIDER="extractive",
        SSE_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS),
        THROTTLE_CHAT="1000/min",
    )
    log_path = BASE_DIR / "var" / f"test-asgi-{os.getpid()}.log"
    with start_uvicorn(env=env, log_path=log_path, log_level="warning") as server:
        yield server

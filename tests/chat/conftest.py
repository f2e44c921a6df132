"""Chat fixtures: a folder with known chunks, providers, and a real ASGI server on the test database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from django.utils import timezone

from apps.library.models import Chunk, File, Folder
from apps.llm.factory import use_provider_for_tests
from apps.llm.scripted import ScriptedProvider
from apps.search.embeddings import get_embedder
from tests.conftest import BASE_DIR, _database_url_of_current_connection
from tests.support.llm_wire_stub import LLMWireStub

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


@pytest.fixture
def scripted() -> Iterator[ScriptedProvider]:
    with use_provider_for_tests(ScriptedProvider()) as provider:
        yield provider  # type: ignore[misc]


@pytest.fixture
def wire_stub() -> Iterator[LLMWireStub]:
    with LLMWireStub() as stub:
        yield stub


@pytest.fixture(autouse=True)
def _fresh_throttle_counts():
    from django.core.cache import cache

    cache.clear()


@dataclass(frozen=True)
class Server:
    url: str
    log_path: str


HEARTBEAT_SECONDS = 0.3


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def asgi_server(django_db_setup, django_db_blocker) -> Iterator[Server]:
    """uvicorn serving config.asgi on the test database (tests using it must be transactional)."""
    port = _free_port()
    log_path = BASE_DIR / "var" / f"test-asgi-{os.getpid()}.log"
    env = {
        **os.environ,
        "DATABASE_URL": _database_url_of_current_connection(),
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "EMBEDDING_PROVIDER": "hash",
        "LLM_PROVIDER": "extractive",
        "SSE_HEARTBEAT_SECONDS": str(HEARTBEAT_SECONDS),
        "THROTTLE_CHAT": "1000/min",
    }
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "config.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "warning",
            ],
            cwd=BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"uvicorn exited early:\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn not ready:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)
        yield Server(url=url, log_path=str(log_path))
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()

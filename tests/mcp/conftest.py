"""MCP fixtures: a folder of known chunks, another user's folder, and the real ASGI server."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from apps.library.models import File, Folder
from tests.support.chat_library import THREE_FILES, add_file, make_folder
from tests.support.fixtures import asgi_server, fresh_throttle_counts  # noqa: F401  (fixtures)
from tests.support.tokens import api_token

MIME_TYPES = {"pdf": "application/pdf", "md": "text/markdown", "txt": "text/plain"}


@dataclass
class Library:
    folder: Folder
    files: dict[str, File]


def library_of(user, name: str = "notes") -> Library:
    folder = make_folder(user, name)
    files = {}
    for path, chunks in THREE_FILES.items():
        file = add_file(folder=folder, path=path, chunks=chunks)
        File.objects.filter(pk=file.pk).update(mime_type=MIME_TYPES[path.rsplit(".", 1)[-1]])
        files[path] = file
    return Library(folder=folder, files=files)


@pytest.fixture
def library(user) -> Library:
    return library_of(user)


@pytest.fixture
def others_library(other_user) -> Library:
    return library_of(other_user, "private")


@pytest.fixture
def token(user) -> str:
    return api_token(user)

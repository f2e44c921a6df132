"""Chat fixtures: a folder with known chunks, providers, and a real ASGI server on the test database."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from apps.library.models import File, Folder
from tests.support.chat_library import THREE_FILES, add_file, make_folder
from tests.support.fixtures import (  # noqa: F401  (fixtures; fresh_throttle_counts is autouse)
    asgi_server,
    fresh_throttle_counts,
    sdk,
    worker_model,
)


@dataclass
class Library:
    folder: Folder
    files: dict[str, File]


@pytest.fixture
def library(user) -> Library:
    folder = make_folder(user)
    return Library(
        folder=folder,
        files={path: add_file(folder=folder, path=path, chunks=chunks) for path, chunks in THREE_FILES.items()},
    )

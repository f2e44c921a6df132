"""MCP fixtures: a folder of known chunks, another user's folder, and the real ASGI server."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from apps.library.models import File, Folder
from tests.support.chat_library import add_file, make_folder
from tests.support.fixtures import asgi_server, fresh_throttle_counts  # noqa: F401  (fixtures)
from tests.support.tokens import api_token

# Each question the tests ask is answered by exactly one of these files.
LIBRARY: dict[str, list[tuple[str, dict]]] = {
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
MIME_TYPES = {"pdf": "application/pdf", "md": "text/markdown", "txt": "text/plain"}


@dataclass
class Library:
    folder: Folder
    files: dict[str, File]


def library_of(user, name: str = "notes") -> Library:
    folder = make_folder(user, name)
    files = {}
    for path, chunks in LIBRARY.items():
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

"""Chat fixtures: a folder with known chunks, providers, and a real ASGI server on the test database."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from apps.library.models import File, Folder
from tests.support.chat_library import add_file, make_folder
from tests.support.fixtures import (  # noqa: F401  (fixtures; fresh_throttle_counts is autouse)
    asgi_server,
    fresh_throttle_counts,
    sdk,
    worker_model,
)

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


@pytest.fixture
def library(user) -> Library:
    folder = make_folder(user)
    return Library(
        folder=folder,
        files={path: add_file(folder=folder, path=path, chunks=chunks) for path, chunks in LIBRARY.items()},
    )

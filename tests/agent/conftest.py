"""Agent fixtures: a folder whose files answer distinct questions, another user's folder, providers.

Tools run in worker threads with their own database connections, so tests that run the loop are
transactional: rows created in a test's open transaction would be invisible to those threads.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest

from apps.library.models import File, Folder
from tests.support.agent_runs import SECRET_TEXT, hook_server  # noqa: F401  (hook_server: a fixture)
from tests.support.chat_library import add_dated_file, make_folder
from tests.support.fixtures import sdk  # noqa: F401  (the real openai / anthropic SDK against the wire stub)

LIBRARY: dict[str, tuple[dt.date, list[tuple[str, dict]]]] = {
    "finance/W2_2024.pdf": (
        dt.date(2025, 1, 20),
        [
            ("The W-2 form for 2024 reports total wages of 84,500 dollars paid by Acme Corporation.", {"page": 1}),
            ("Federal income tax withheld on the 2024 W-2 was 12,300 dollars.", {"page": 2}),
        ],
    ),
    "finance/W2_2023.pdf": (
        dt.date(2024, 1, 25),
        [
            ("The W-2 form for 2023 reports total wages of 79,000 dollars paid by Acme Corporation.", {"page": 1}),
            ("Federal income tax withheld on the 2023 W-2 was 11,100 dollars.", {"page": 2}),
        ],
    ),
    "recipes/pancakes.md": (
        dt.date(2023, 6, 1),
        [("Pancakes need two cups of flour, two eggs and one and a half cups of milk.", {"heading": "Ingredients"})],
    ),
    "travel/passport.txt": (
        dt.date(2025, 2, 3),
        [("The passport renewal appointment is booked at the consulate on March 3.", {})],
    ),
}


@dataclass
class Library:
    folder: Folder
    files: dict[str, File]

    def file(self, name: str) -> File:
        return next(file for path, file in self.files.items() if path.endswith(name))


@pytest.fixture
def library(user) -> Library:
    folder = make_folder(user)
    return Library(
        folder=folder,
        files={
            path: add_dated_file(folder=folder, path=path, modified=modified, chunks=chunks)
            for path, (modified, chunks) in LIBRARY.items()
        },
    )


@pytest.fixture
def secret_file(other_user) -> File:
    """Another user's file, which no tool of `library`'s conversation may ever show."""
    folder = make_folder(other_user, name="private")
    return add_dated_file(
        folder=folder, path="deals/merger.txt", modified=dt.date(2025, 1, 1), chunks=[(SECRET_TEXT, {})]
    )

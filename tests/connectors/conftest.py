"""The real googleapiclient against the Drive emulator (`emulator`, `state`: tests/conftest.py); no database needed."""

from __future__ import annotations

from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials

from apps.connectors.drive import mimes
from apps.connectors.drive.client import RetryPolicy, build_drive_service
from apps.connectors.drive.source import DriveSource
from emulators.drive.server import DriveEmulator
from emulators.drive.state import DriveState
from tests.support.drive_connector_tree import Tree


@pytest.fixture
def sleeps() -> list[float]:
    """Delays the retry policy asked for, instead of sleeping them."""
    return []


@pytest.fixture
def retry(sleeps: list[float]) -> RetryPolicy:
    return RetryPolicy(max_retries=3, base_delay=0.1, max_delay=5.0, sleep=sleeps.append, random=lambda: 0.5)


@pytest.fixture
def service(emulator: DriveEmulator) -> Any:
    return build_drive_service(credentials=AnonymousCredentials(), api_endpoint=emulator.api_endpoint)


@pytest.fixture
def tree(state: DriveState) -> Tree:
    """Taxes/{readme.txt, inbox/{W2_2024.pdf, scans/receipt.png}, 2023/return.pdf, notes, budget, deck,
    link to outside.pdf}; Elsewhere/outside.pdf lives outside the connected folder."""
    root = state.add_folder("Taxes")
    inbox = state.add_folder("inbox", parent_id=root)
    scans = state.add_folder("scans", parent_id=inbox)
    archive = state.add_folder("2023", parent_id=root)
    elsewhere = state.add_folder("Elsewhere")
    outside = state.add_file("outside.pdf", b"%PDF outside", parent_id=elsewhere, mime_type="application/pdf")
    return Tree(
        root=root,
        readme=state.add_file("readme.txt", b"read me first", parent_id=root),
        inbox=inbox,
        w2=state.add_file("W2_2024.pdf", b"%PDF W2 2024", parent_id=inbox, mime_type="application/pdf"),
        scans=scans,
        receipt=state.add_file("receipt.png", b"\x89PNG receipt", parent_id=scans, mime_type="image/png"),
        archive=archive,
        old_return=state.add_file("return.pdf", b"%PDF 2023", parent_id=archive, mime_type="application/pdf"),
        notes=state.add_google_file(
            "notes", parent_id=root, exports={"text/markdown": b"# Notes", "text/plain": b"Notes"}
        ),
        budget=state.add_google_file(
            "budget", parent_id=root, mime_type=mimes.SPREADSHEET, exports={"text/csv": b"a,b\n1,2\n"}
        ),
        deck=state.add_google_file(
            "deck", parent_id=root, mime_type=mimes.PRESENTATION, exports={"text/plain": b"Slide 1"}
        ),
        shortcut=state.add_shortcut("outside link", parent_id=root, target_id=outside),
        outside=outside,
        elsewhere=elsewhere,
    )


@pytest.fixture
def source(service: Any, tree: Tree, retry: RetryPolicy) -> DriveSource:
    # Tiny pages and query batches so pagination and batching are exercised on a small tree.
    return DriveSource(service, tree.root, retry=retry, page_size=2, folders_per_query=2)

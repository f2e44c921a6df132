"""The inbox page in the browser tests: a local folder of unsorted and filed files, indexed, and a
message to the inbox assistant waited for until it is answered."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.contrib.auth.models import AbstractBaseUser
from playwright.sync_api import Page, expect

from apps.library.indexing import folder_index
from apps.library.models import Folder
from tests.support.servers import BASE_DIR


@contextmanager
def indexed_local_folder(
    *, user: AbstractBaseUser, monkeypatch: pytest.MonkeyPatch, name: str, files: dict[str, str]
) -> Iterator[tuple[Folder, Path]]:
    """A local folder on disk holding `files` (path: text), indexed in-process; removed afterwards."""
    root = BASE_DIR / "var" / "folders" / f"web-inbox-{uuid.uuid4().hex[:8]}"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    folder = Folder.objects.create(owner=user, source="local", external_id=str(root), name=name)
    # Suggestions come from the tests, not from the digest hook's task.
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", lambda *args: None)
    folder_index(folder_id=folder.pk, inline=True)
    try:
        yield folder, root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def inbox_ask(page: Page, text: str) -> None:
    box = page.locator("#inbox-composer").get_by_label("Message to the inbox assistant")
    box.fill(text)
    box.press("Enter")
    expect(page.locator("#inbox-run-status")).to_have_text("Answered.", timeout=30_000)

"""A copy of the sample folder under an allowed root, indexed inline with the hash embedder (organize and inbox suites).

The digest-complete hook's tasks are recorded, not sent: these tests call the services the
tasks call. (The end-to-end test runs the real worker chain instead.)
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from apps.library.indexing import folder_index
from apps.library.models import Chunk, File, Folder
from tests.support.servers import BASE_DIR

SAMPLE = BASE_DIR / "sample_folder"


@dataclass
class Sample:
    root: Path
    folder: Folder

    def file(self, path: str) -> File:
        return File.objects.get(folder=self.folder, path=path)

    def chunk_ids(self, path: str) -> list[int]:
        return sorted(Chunk.objects.filter(file__folder=self.folder, file__path=path).values_list("id", flat=True))


@pytest.fixture
def queued_suggestions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """File ids the digest-complete hook queued; syncs (queued by saved notes) are dropped."""
    sent: list[int] = []
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", sent.append)
    monkeypatch.setattr("apps.library.enqueue.sync_folder", lambda folder_id: None)
    return sent


def copy_sample(tmp_path: Path, settings) -> Path:
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path)]
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root)
    return root


def index_sample(root: Path, owner, capture) -> Folder:
    folder = Folder.objects.create(owner=owner, source="local", external_id=str(root), name=root.name)
    with capture(execute=True):
        folder_index(folder_id=folder.pk, inline=True)
    return folder


@pytest.fixture
def sample(db, tmp_path, settings, user, queued_suggestions, django_capture_on_commit_callbacks) -> Iterator[Sample]:
    root = copy_sample(tmp_path, settings)
    yield Sample(root=root, folder=index_sample(root, user, django_capture_on_commit_callbacks))


def drop(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path

"""Fixtures for ingestion tests: a local folder under an allowed root, and its Folder row."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.library.models import Folder
from tests.support.fixtures import asgi_server  # noqa: F401  (the folder event stream tests)


@pytest.fixture
def root(tmp_path, settings) -> Path:
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path)]
    folder = tmp_path / "docs"
    folder.mkdir()
    return folder


@pytest.fixture
def make_folder(user):
    def make(path: Path) -> Folder:
        return Folder.objects.create(owner=user, source="local", external_id=str(path), name=path.name)

    return make


@pytest.fixture
def folder(root, make_folder) -> Folder:
    return make_folder(root)

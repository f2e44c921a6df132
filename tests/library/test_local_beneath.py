"""Local reads and moves open each path component beneath the folder's directory, following no
symlink: a directory swapped for a symlink between the check and the open is refused, and what
lies outside is never read or written."""

from __future__ import annotations

import datetime as dt
import os

import pytest

from apps.connectors.local import LocalSource
from apps.library.sources import SourceEntry, SourceError
from tests.support.files import swap_for_symlink_after_check, write
from tests.support.originals import body, file_row

SECRET = b"the secret next door"


@pytest.fixture
def outside(tmp_path):
    directory = tmp_path / "outside"
    write(directory, "a.txt", SECRET)
    return directory


@pytest.fixture
def swapped(root, outside, monkeypatch):
    """notes/a.txt in the folder; notes/ becomes a symlink to outside/ once the path is checked."""
    write(root, "notes/a.txt", b"inside")
    swap_for_symlink_after_check(monkeypatch, directory=root / "notes", outside=outside)
    return root


def entry(path: str) -> SourceEntry:
    return SourceEntry(path, path, path.rsplit("/", 1)[-1], "text/plain", 6, "", dt.datetime.now(dt.UTC))


def test_read_bytes_refuses_a_directory_swapped_for_a_symlink(swapped):
    with pytest.raises(SourceError, match="notes is a symbolic link; files are read only beneath the folder"):
        LocalSource(swapped).read_bytes(entry("notes/a.txt"))


def test_open_original_refuses_a_directory_swapped_for_a_symlink(swapped):
    with pytest.raises(SourceError, match="notes is a symbolic link; files are read only beneath the folder"):
        LocalSource(swapped).open_original(entry("notes/a.txt"))


@pytest.mark.django_db
def test_the_content_endpoint_refuses_a_directory_swapped_for_a_symlink(auth_client, swapped, folder):
    response = auth_client.get(f"/api/files/{file_row(folder=folder, path='notes/a.txt').pk}/content")
    assert response.status_code == 403
    assert SECRET not in body(response)
    assert "is a symbolic link" in response.json()["detail"]


def test_a_move_into_a_directory_swapped_for_a_symlink_writes_nothing_outside(root, outside, monkeypatch):
    write(root, "inbox/new.txt", b"moving")
    (root / "notes").mkdir()
    source = LocalSource(root)
    moved = next(item for item in source.list_entries() if item.path == "inbox/new.txt")
    swap_for_symlink_after_check(monkeypatch, directory=root / "notes", outside=outside)
    with pytest.raises(SourceError, match="notes is a symbolic link"):
        source.move(moved, "notes/new.txt")
    assert sorted(os.listdir(outside)) == ["a.txt"]
    assert (root / "inbox/new.txt").read_bytes() == b"moving"


def test_listing_hashes_only_what_is_beneath_the_folder(swapped):
    source = LocalSource(swapped)
    assert [item.path for item in source.list_entries()] == []
    assert "is a symbolic link" in source.problems()[0].reason


def test_a_symlink_to_a_file_inside_the_folder_is_still_read_from_its_target(root):
    write(root, "real/target.txt", b"inside")
    os.symlink(root / "real" / "target.txt", root / "alias.txt")
    assert LocalSource(root).read_bytes(entry("alias.txt"))[0] == b"inside"

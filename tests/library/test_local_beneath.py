"""Local reads, listings, writes and moves open each path component beneath the folder's directory, following no
symlink: a directory swapped for a symlink between the check and the open is refused, and what
lies outside is never read or written."""

from __future__ import annotations

import datetime as dt
import io
import os

import pytest

from apps.connectors.local import LocalSource
from apps.library.sources import SourceEntry, SourceError
from tests.support.files import swap_for_symlink_after_check, swap_for_symlink_before_open, write
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


def test_a_listing_does_not_walk_a_directory_swapped_for_a_symlink(root, outside, monkeypatch):
    write(root, "notes/a.txt", b"inside")
    write(outside, "next-door-name.txt", SECRET)
    source = LocalSource(root)
    # After the folder's own directory is listed, before notes/ is opened.
    swap_for_symlink_before_open(monkeypatch, root=root, directory=root / "notes", outside=outside, at_open=2)
    assert [item.path for item in source.list_entries()] == []
    assert [(problem.path, problem.reason) for problem in source.problems()] == [
        ("notes", "notes is a symbolic link; files are read only beneath the folder.")
    ]


def test_an_upload_into_a_directory_swapped_for_a_symlink_writes_nothing_outside(root, outside, monkeypatch):
    (root / "inbox").mkdir()
    swap_for_symlink_before_open(monkeypatch, root=root, directory=root / "inbox", outside=outside)
    with pytest.raises(SourceError, match="inbox is a symbolic link"):
        LocalSource(root).write_file("inbox", "new.txt", io.BytesIO(b"uploaded"), "text/plain")
    assert sorted(os.listdir(outside)) == ["a.txt"]


def test_an_overwrite_beneath_a_directory_swapped_for_a_symlink_writes_nothing_outside(root, outside, monkeypatch):
    write(root, "notes/a.txt", b"inside")
    swap_for_symlink_before_open(monkeypatch, root=root, directory=root / "notes", outside=outside)
    with pytest.raises(SourceError, match="notes is a symbolic link"):
        LocalSource(root).overwrite("notes/a.txt", b"replaced", mime_type="text/plain")
    assert (outside / "a.txt").read_bytes() == SECRET
    assert sorted(os.listdir(outside)) == ["a.txt"]


def test_uploads_and_overwrites_still_land_beneath_the_folder(root):
    source = LocalSource(root)
    first = source.write_file("inbox", "new.txt", io.BytesIO(b"one"), "text/plain")
    second = source.write_file("inbox", "new.txt", io.BytesIO(b"two"), "text/plain")
    rewritten = source.overwrite("guides/notes.md", b"# Notes", mime_type="text/markdown")
    assert (first.path, second.path, rewritten.path) == ("inbox/new.txt", "inbox/new (2).txt", "guides/notes.md")
    assert (root / "inbox/new (2).txt").read_bytes() == b"two"
    assert (root / "guides/notes.md").read_bytes() == b"# Notes"
    assert sorted(os.listdir(root / "inbox")) == ["new (2).txt", "new.txt"]  # no temporary left behind

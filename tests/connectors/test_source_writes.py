"""Sources write new files: Drive through a real multipart files.create (emulator), local through
a hidden temporary file linked into place; neither ever overwrites a file of the same name."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from apps.connectors.drive.source import DriveSource
from apps.connectors.local import LocalSource
from apps.library.sources import SourceError
from emulators.drive.state import DriveState
from tests.support.drive_connector_tree import Tree

PDF = b"%PDF-1.4 a new statement"


def test_drive_upload_lands_in_the_inbox_with_its_bytes(source: DriveSource, state: DriveState, tree: Tree) -> None:
    entry = source.write_file("inbox/", "statement.pdf", io.BytesIO(PDF), "application/pdf")

    assert (entry.path, entry.name, entry.mime_type, entry.size) == (
        "inbox/statement.pdf",
        "statement.pdf",
        "application/pdf",
        len(PDF),
    )
    assert state.item(entry.external_id).parents == [tree.inbox]
    assert source.read_bytes(entry) == (PDF, "application/pdf")
    assert state.calls["files.create"] == 1


def test_drive_upload_of_a_taken_name_gets_a_number(source: DriveSource, state: DriveState, tree: Tree) -> None:
    entry = source.write_file("inbox/", "W2_2024.pdf", io.BytesIO(PDF), "application/pdf")

    assert entry.path == "inbox/W2_2024 (2).pdf"
    assert source.read_bytes(entry)[0] == PDF
    originals = state.search(lambda item: item.name == "W2_2024.pdf", all_drives=True, drive_id=None)
    assert len(originals) == 1  # the first W2 is untouched


def test_drive_upload_creates_a_missing_inbox(source: DriveSource, state: DriveState, tree: Tree) -> None:
    entry = source.write_file("drop/", "note.txt", io.BytesIO(b"hello"), "text/plain")

    assert entry.path == "drop/note.txt"
    assert state.item(state.item(entry.external_id).parents[0]).name == "drop"


def test_local_write_never_overwrites_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "inbox").mkdir()
    (tmp_path / "inbox" / "W2.pdf").write_bytes(b"%PDF-1.4 the first W2")
    source = LocalSource(tmp_path)

    second = source.write_file("inbox/", "W2.pdf", io.BytesIO(PDF), "application/pdf")
    third = source.write_file("inbox/", "W2.pdf", io.BytesIO(PDF), "application/pdf")

    assert (second.path, third.path) == ("inbox/W2 (2).pdf", "inbox/W2 (3).pdf")
    assert (tmp_path / "inbox" / "W2.pdf").read_bytes() == b"%PDF-1.4 the first W2"
    assert (tmp_path / "inbox" / "W2 (2).pdf").read_bytes() == PDF
    assert sorted(os.listdir(tmp_path / "inbox")) == ["W2 (2).pdf", "W2 (3).pdf", "W2.pdf"]
    assert second.checksum == next(e for e in source.list_entries() if e.path == second.path).checksum


def test_local_write_does_not_follow_a_planted_symlink(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside.txt"
    (root / "inbox").mkdir(parents=True)
    outside.write_text("keep me")
    (root / "inbox" / "note.txt").symlink_to(outside)

    entry = LocalSource(root).write_file("inbox/", "note.txt", io.BytesIO(b"new"), "text/plain")

    assert entry.path == "inbox/note (2).txt"
    assert outside.read_text() == "keep me"


@pytest.mark.parametrize("name", ["../escape.txt", "a/b.txt", ".hidden", ""])
def test_local_write_refuses_names_that_are_not_plain(tmp_path: Path, name: str) -> None:
    with pytest.raises(SourceError):
        LocalSource(tmp_path).write_file("inbox/", name, io.BytesIO(b"x"), "text/plain")
    assert not list(tmp_path.rglob("*.txt"))


def test_local_write_refuses_an_inbox_that_leads_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (root / "inbox").symlink_to(outside)

    with pytest.raises(SourceError, match="leads outside the folder"):
        LocalSource(root).write_file("inbox/", "note.txt", io.BytesIO(b"x"), "text/plain")
    assert list(outside.iterdir()) == []


def test_local_write_into_a_folder_that_is_gone_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no longer exists"):
        LocalSource(tmp_path / "gone").write_file("inbox/", "note.txt", io.BytesIO(b"x"), "text/plain")

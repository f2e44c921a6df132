"""DriveSource listing, reading and moving, through the real client against the emulator."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from apps.connectors.drive import mimes
from apps.connectors.drive.client import RetryPolicy
from apps.connectors.drive.source import DriveSource
from apps.library.parsing import parse_document
from apps.library.sources import Source, SourceEntry, SourceError, SourceNotFoundError
from emulators.drive.state import DriveState
from tests.support.drive_connector_tree import TREE_PATHS, Tree
from tests.support.office_documents import pptx_bytes, xlsx_bytes


def _by_path(source: DriveSource) -> dict[str, SourceEntry]:
    return {entry.path: entry for entry in source.list_entries()}


def test_drive_source_satisfies_the_source_protocol(source: DriveSource) -> None:
    as_source: Source = source  # checked by mypy

    assert {entry.path for entry in as_source.list_entries()} == TREE_PATHS


def test_lists_nested_folders_across_pages(source: DriveSource, state: DriveState, tree: Tree) -> None:
    entries = _by_path(source)

    assert set(entries) == TREE_PATHS
    w2 = entries["inbox/W2_2024.pdf"]
    assert (w2.external_id, w2.name, w2.mime_type, w2.size) == (tree.w2, "W2_2024.pdf", "application/pdf", 12)
    assert w2.checksum == hashlib.md5(b"%PDF W2 2024", usedforsecurity=False).hexdigest()
    assert w2.modified_time.tzinfo is not None
    # Page size 2 over 4 folders: more list calls than folders proves pagination was followed.
    assert state.calls["files.list"] > 4
    assert source.problems() == []


def test_large_pages_and_batched_folders_need_few_calls(
    service: Any,
    state: DriveState,
    tree: Tree,
    retry: RetryPolicy,
) -> None:
    source = DriveSource(service, tree.root, retry=retry)

    assert set(_by_path(source)) == TREE_PATHS
    # Root alone, then its two subfolders in one query, then scans: 3 list calls, plus the root's get.
    assert state.calls["files.list"] == 3
    assert state.calls["files.get"] == 2  # the root, and the shortcut's target


def test_google_native_files_use_their_version_as_checksum(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
) -> None:
    before = _by_path(source)["notes"]
    state.edit(tree.notes, exports={"text/markdown": b"# Notes v2", "text/plain": b"Notes v2"})
    after = _by_path(source)["notes"]

    assert before.mime_type == mimes.DOCUMENT
    assert before.checksum.startswith("v")
    assert after.checksum != before.checksum


def test_trashed_files_and_folders_are_not_listed(source: DriveSource, state: DriveState, tree: Tree) -> None:
    state.trash(tree.readme)
    state.trash(tree.inbox)

    assert set(_by_path(source)) == TREE_PATHS - {
        "readme.txt",
        "inbox/W2_2024.pdf",
        "inbox/scans/receipt.png",
    }


def test_shortcut_is_listed_at_its_place_with_its_targets_content(source: DriveSource, tree: Tree) -> None:
    link = _by_path(source)["outside link"]

    assert link.external_id == tree.shortcut
    assert link.mime_type == "application/pdf"
    assert link.checksum == hashlib.md5(b"%PDF outside", usedforsecurity=False).hexdigest()
    assert source.read_bytes(link) == (b"%PDF outside", "application/pdf")


def test_unindexable_items_become_problems(source: DriveSource, state: DriveState, tree: Tree) -> None:
    state.add_shortcut("folder link", parent_id=tree.root, target_id=tree.elsewhere)
    gone = state.add_file("gone.txt", b"x", parent_id=tree.elsewhere)
    state.add_shortcut("broken link", parent_id=tree.root, target_id=gone)
    state.delete(gone)
    form = "application/vnd.google-apps.form"
    state.add_google_file("survey", parent_id=tree.inbox, mime_type=form, exports={})

    paths = set(_by_path(source))

    assert paths == TREE_PATHS
    assert {(problem.path, problem.reason) for problem in source.problems()} == {
        ("folder link", "shortcuts to folders are not followed"),
        ("broken link", "the shortcut's target is gone or in the trash"),
        ("inbox/survey", "Google form files have no text export"),
    }


def test_read_bytes_downloads_and_exports(source: DriveSource, state: DriveState) -> None:
    entries = _by_path(source)

    assert source.read_bytes(entries["inbox/W2_2024.pdf"]) == (b"%PDF W2 2024", "application/pdf")
    assert source.read_bytes(entries["notes"]) == (b"# Notes", "text/markdown")
    assert source.read_bytes(entries["budget"]) == (b"a,b\n1,2\n", "text/csv")
    assert source.read_bytes(entries["deck"]) == (b"Slide 1", "text/plain")
    assert state.calls["files.download"] == 1
    # Sheets and Slides ask for xlsx and pptx first; these emulated files offer only CSV and text.
    assert state.calls["files.export"] == 5


def test_sheets_and_slides_export_as_office_files_with_sheet_and_slide_locations(
    source: DriveSource, state: DriveState, tree: Tree
) -> None:
    workbook, deck = xlsx_bytes(), pptx_bytes()
    state.add_google_file(
        "plan", parent_id=tree.root, mime_type=mimes.SPREADSHEET, exports={mimes.XLSX: workbook, "text/csv": b"a"}
    )
    state.add_google_file(
        "talk", parent_id=tree.root, mime_type=mimes.PRESENTATION, exports={mimes.PPTX: deck, "text/plain": b"a"}
    )
    entries = _by_path(source)

    sheet_data, sheet_type = source.read_bytes(entries["plan"])
    slide_data, slide_type = source.read_bytes(entries["talk"])

    assert (sheet_data, sheet_type, slide_data, slide_type) == (workbook, mimes.XLSX, deck, mimes.PPTX)
    # Every tab, where the CSV export has the first only; slides keep their numbers and notes.
    sheets = parse_document(data=sheet_data, mime_type=sheet_type, name="plan")
    assert {dict(segment.place)["sheet"] for segment in sheets.segments} == {"Q4", "Notes"}
    slides = parse_document(data=slide_data, mime_type=slide_type, name="talk")
    assert [dict(segment.place)["slide"] for segment in slides.segments] == [1, 2]
    assert "Speaker notes: Mention the Berlin office opening" in slides.text


def test_doc_export_falls_back_to_plain_text(source: DriveSource, state: DriveState, tree: Tree) -> None:
    state.add_google_file("old doc", parent_id=tree.root, exports={"text/plain": b"plain only"})

    old_doc = _by_path(source)["old doc"]

    assert source.read_bytes(old_doc) == (b"plain only", "text/plain")


def test_read_bytes_of_a_deleted_file_is_not_found(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
) -> None:
    readme = _by_path(source)["readme.txt"]
    state.delete(tree.readme)

    with pytest.raises(SourceNotFoundError):
        source.read_bytes(readme)


def test_move_to_another_subfolder_and_rename(source: DriveSource, state: DriveState, tree: Tree) -> None:
    w2 = _by_path(source)["inbox/W2_2024.pdf"]

    moved = source.move(w2, "2023/W2 (filed).pdf")

    assert (moved.external_id, moved.path, moved.name) == (tree.w2, "2023/W2 (filed).pdf", "W2 (filed).pdf")
    assert moved.checksum == w2.checksum
    assert state.item(tree.w2).parents == [tree.archive]
    assert set(_by_path(source)) == (TREE_PATHS - {"inbox/W2_2024.pdf"}) | {"2023/W2 (filed).pdf"}
    assert state.calls["files.update"] == 1


def test_move_creates_missing_folders(source: DriveSource, tree: Tree) -> None:
    readme = _by_path(source)["readme.txt"]

    moved = source.move(readme, "2024/q1/readme.txt")

    assert moved.path == "2024/q1/readme.txt"
    assert "2024/q1/readme.txt" in _by_path(source)


def test_move_of_a_shortcut_keeps_its_target(source: DriveSource, state: DriveState, tree: Tree) -> None:
    link = _by_path(source)["outside link"]

    moved = source.move(link, "inbox/outside link")

    assert moved.path == "inbox/outside link"
    assert source.read_bytes(moved) == (b"%PDF outside", "application/pdf")
    assert state.item(tree.outside).parents == [tree.elsewhere]


@pytest.mark.parametrize("new_path", ["inbox/W2_2024.pdf", "/abs.txt", "../escape.txt", "a//b.txt", ""])
def test_move_refuses_existing_or_invalid_targets(
    source: DriveSource,
    state: DriveState,
    new_path: str,
) -> None:
    readme = _by_path(source)["readme.txt"]

    with pytest.raises(SourceError):
        source.move(readme, new_path)
    assert state.calls["files.update"] == 0


def test_missing_root_is_folder_not_found(service: Any, retry: RetryPolicy) -> None:
    with pytest.raises(SourceNotFoundError, match="folder not found"):
        list(DriveSource(service, "no-such-folder", retry=retry).list_entries())


def test_trashed_root_is_not_found(source: DriveSource, state: DriveState, tree: Tree) -> None:
    state.trash(tree.root)

    with pytest.raises(SourceNotFoundError, match="trash"):
        list(source.list_entries())


def test_a_file_id_is_not_a_folder(service: Any, tree: Tree, retry: RetryPolicy) -> None:
    with pytest.raises(SourceError, match="not a folder"):
        list(DriveSource(service, tree.readme, retry=retry).list_entries())


def test_shared_drive_folder_is_listed_and_synced(
    service: Any,
    state: DriveState,
    retry: RetryPolicy,
) -> None:
    drive_id = state.add_shared_drive("Team")
    folder = state.add_folder("Projects", parent_id=drive_id)
    state.add_file("plan.txt", b"plan", parent_id=folder)
    source = DriveSource(service, folder, retry=retry)
    cursor = source.start_cursor()

    assert [entry.path for entry in source.list_entries()] == ["plan.txt"]
    added = state.add_file("later.txt", b"later", parent_id=folder)
    assert [entry.external_id for entry in source.changes_since(cursor).upserted] == [added]

"""DriveSource.changes_since: each kind of change, its cost, and cursor expiry."""

from __future__ import annotations

from typing import Any

import pytest

from apps.connectors.drive.client import CursorExpiredError, RetryPolicy
from apps.connectors.drive.source import DriveSource
from apps.library.sources import ChangeSet, SourceNotFoundError
from emulators.drive.errors import FaultKind
from emulators.drive.state import DriveState
from tests.support.drive_connector_tree import Tree


@pytest.fixture
def cursor(source: DriveSource, state: DriveState) -> str:
    token = source.start_cursor()
    state.reset_calls()
    return token


def _paths(changes: ChangeSet) -> dict[str, str]:
    return {entry.external_id: entry.path for entry in changes.upserted}


def test_unchanged_folder_costs_one_call(source: DriveSource, state: DriveState, cursor: str) -> None:
    changes = source.changes_since(cursor)

    assert changes == ChangeSet(upserted=[], removed_ids=[], cursor=cursor)
    assert sum(state.calls.values()) == 1


def test_added_file_in_a_subfolder(source: DriveSource, state: DriveState, tree: Tree, cursor: str) -> None:
    added = state.add_file("1099.pdf", b"%PDF 1099", parent_id=tree.scans, mime_type="application/pdf")

    changes = source.changes_since(cursor)

    assert _paths(changes) == {added: "inbox/scans/1099.pdf"}
    assert changes.removed_ids == []
    assert changes.cursor != cursor
    # The change list, then the two ancestors between the file and the root.
    assert dict(state.calls) == {"changes.list": 1, "files.get": 2}


def test_modified_file_gets_a_new_checksum(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
    cursor: str,
) -> None:
    before = next(entry for entry in source.list_entries() if entry.external_id == tree.readme)
    state.edit(tree.readme, b"read me second")

    [after] = source.changes_since(cursor).upserted

    assert after.external_id == tree.readme
    assert after.checksum != before.checksum


def test_deleted_file_is_removed(source: DriveSource, state: DriveState, tree: Tree, cursor: str) -> None:
    state.delete(tree.w2)

    changes = source.changes_since(cursor)

    assert (changes.upserted, changes.removed_ids) == ([], [tree.w2])


def test_renamed_file_gets_its_new_path(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
    cursor: str,
) -> None:
    state.rename(tree.w2, "W2 2024 final.pdf")

    assert _paths(source.changes_since(cursor)) == {tree.w2: "inbox/W2 2024 final.pdf"}


def test_move_between_subfolders(source: DriveSource, state: DriveState, tree: Tree, cursor: str) -> None:
    state.move(tree.receipt, tree.archive)

    changes = source.changes_since(cursor)

    assert _paths(changes) == {tree.receipt: "2023/receipt.png"}
    assert changes.removed_ids == []


def test_move_out_of_the_folder_is_a_removal(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
    cursor: str,
) -> None:
    state.move(tree.w2, tree.elsewhere)

    changes = source.changes_since(cursor)

    assert changes.upserted == []
    assert changes.removed_ids == [tree.w2]


def test_move_into_the_folder_is_an_addition(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
    cursor: str,
) -> None:
    state.move(tree.outside, tree.inbox)

    assert _paths(source.changes_since(cursor)) == {tree.outside: "inbox/outside.pdf"}


def test_trash_then_restore(source: DriveSource, state: DriveState, tree: Tree, cursor: str) -> None:
    state.trash(tree.receipt)
    trashed = source.changes_since(cursor)
    state.restore(tree.receipt)
    restored = source.changes_since(trashed.cursor)

    assert (trashed.upserted, trashed.removed_ids) == ([], [tree.receipt])
    assert (_paths(restored), restored.removed_ids) == ({tree.receipt: "inbox/scans/receipt.png"}, [])


def test_trashed_subfolder_removes_its_files(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
    cursor: str,
) -> None:
    state.trash(tree.inbox)

    changes = source.changes_since(cursor)

    assert changes.upserted == []
    assert set(changes.removed_ids) == {tree.w2, tree.receipt}


def test_renamed_subfolder_moves_everything_beneath(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
    cursor: str,
) -> None:
    state.rename(tree.inbox, "incoming")

    changes = source.changes_since(cursor)

    assert _paths(changes) == {tree.w2: "incoming/W2_2024.pdf", tree.receipt: "incoming/scans/receipt.png"}
    assert changes.removed_ids == []


def test_subfolder_moved_out_removes_everything_beneath(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
    cursor: str,
) -> None:
    state.move(tree.inbox, tree.elsewhere)

    changes = source.changes_since(cursor)

    assert changes.upserted == []
    assert set(changes.removed_ids) == {tree.w2, tree.receipt}


def test_changes_elsewhere_upsert_nothing(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
    cursor: str,
) -> None:
    state.edit(tree.outside, b"%PDF changed")
    state.add_file("unrelated.txt", b"x", parent_id=DriveState.MY_DRIVE_ID)

    assert source.changes_since(cursor).upserted == []


def test_cost_follows_changes_not_folder_size(
    service: Any,
    state: DriveState,
    tree: Tree,
    retry: RetryPolicy,
) -> None:
    for index in range(300):
        state.add_file(f"bulk-{index}.txt", b"bulk", parent_id=tree.archive)
    source = DriveSource(service, tree.root, retry=retry)
    cursor = source.start_cursor()
    state.edit(tree.old_return, b"%PDF 2023 amended")
    state.reset_calls()

    changes = source.changes_since(cursor)

    assert _paths(changes) == {tree.old_return: "2023/return.pdf"}
    assert dict(state.calls) == {"changes.list": 1, "files.get": 1}


def test_all_pages_of_changes_are_read(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
    cursor: str,
) -> None:
    added = {state.add_file(f"new-{index}.txt", b"new", parent_id=tree.root) for index in range(5)}

    changes = source.changes_since(cursor)

    assert set(_paths(changes)) == added
    assert state.calls["changes.list"] == 3  # page size 2
    assert source.changes_since(changes.cursor).upserted == []


def test_expired_cursor(source: DriveSource, state: DriveState, tree: Tree, cursor: str) -> None:
    state.change_retention = 2
    for name in ("a", "b", "c"):
        state.add_file(name, b"x", parent_id=tree.root)

    with pytest.raises(CursorExpiredError):
        source.changes_since(cursor)


def test_expired_cursor_fault_is_not_retried(source: DriveSource, state: DriveState, cursor: str) -> None:
    state.inject(FaultKind.PAGE_TOKEN_EXPIRED, endpoint="changes.list")

    with pytest.raises(CursorExpiredError):
        source.changes_since(cursor)
    assert state.calls["changes.list"] == 1


def test_deleted_root_is_not_found(source: DriveSource, state: DriveState, tree: Tree, cursor: str) -> None:
    state.trash(tree.root)

    with pytest.raises(SourceNotFoundError):
        source.changes_since(cursor)

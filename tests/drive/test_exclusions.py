"""Exclude patterns on a Drive folder: excluded paths never listed, whether a change or a full
listing brings them, and a pattern change applies at the next sync."""

from __future__ import annotations

import pytest

from apps.library.exclusions import DEFAULT_EXCLUDE_PATTERNS
from apps.library.models import Chunk, Folder
from apps.library.services import folder_update
from emulators.drive.state import DriveState
from tests.support.drive_tree import Tree, paths, run_sync

pytestmark = pytest.mark.django_db


def test_excluded_drive_files_are_never_listed_and_pattern_changes_apply_on_the_next_sync(
    synced: Folder, tree: Tree, state: DriveState, capture
) -> None:
    modules = state.add_folder("node_modules", parent_id=tree.root)
    state.add_file("index.js", b"module.exports = function leftPad() {}\n", parent_id=modules)
    state.add_file("bundle.min.js", b"var a=1;", parent_id=tree.root)
    log = run_sync(synced, capture)
    assert log is not None and log.mode == "changes"
    assert paths(synced) == {"lease.txt", "notes.txt", "a/deep.txt", "doc"}

    with capture(execute=False):
        folder_update(folder=synced, exclude_patterns=DEFAULT_EXCLUDE_PATTERNS + "\na/")
    log = run_sync(synced, capture)
    assert log is not None and log.mode == "full" and log.deleted == 1  # changes alone would not show it
    assert paths(synced) == {"lease.txt", "notes.txt", "doc"}
    assert not Chunk.objects.filter(folder=synced, file__path__startswith="a/").exists()

    with capture(execute=False):
        folder_update(folder=synced, exclude_patterns=DEFAULT_EXCLUDE_PATTERNS)
    run_sync(synced, capture)
    assert paths(synced) == {"lease.txt", "notes.txt", "a/deep.txt", "doc"}
    assert Chunk.objects.filter(folder=synced, file__path="a/deep.txt").exists()

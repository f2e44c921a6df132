"""Drive diff sync: the changes log from the stored cursor, full listing diffs, and what each does to
files and chunks."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.library.models import Chunk, File, Folder
from emulators.drive.state import DriveState
from tests.support.drive_tree import Tree, assert_chunks_consistent, chunk_ids, long_text, paths, run_sync

pytestmark = pytest.mark.django_db

TREE_PATHS = {"lease.txt", "notes.txt", "a/deep.txt", "doc"}


def drive_calls(state: DriveState) -> int:
    return sum(state.calls.values())


def test_indexing_reads_drive_content_through_the_source(synced: Folder) -> None:
    files = {file.path: file for file in File.objects.filter(folder=synced)}
    assert set(files) == TREE_PATHS
    assert {file.status for file in files.values()} == {"indexed"}
    # The Google Doc was exported (markdown first, its heading kept), the others downloaded.
    assert Chunk.objects.filter(file=files["doc"], text__contains="# Plan").exists()
    assert Chunk.objects.filter(file=files["a/deep.txt"], text__contains="Deep").exists()
    assert_chunks_consistent(synced)


def test_first_sync_is_a_full_diff_that_takes_a_cursor(folder: Folder, sleeps, inline_indexing, state, capture):
    log = run_sync(folder, capture)
    folder.refresh_from_db()
    assert log is not None and (log.mode, log.added, log.modified, log.deleted) == ("full", 4, 0, 0)
    assert folder.sync_cursor and folder.last_full_listing_at is not None
    assert state.calls["changes.getStartPageToken"] == 1
    assert paths(folder) == TREE_PATHS
    assert set(File.objects.filter(folder=folder).values_list("status", flat=True)) == {"indexed"}


def test_sync_without_changes_reads_only_the_changes_log(synced: Folder, state: DriveState, capture) -> None:
    before = chunk_ids(synced)
    state.reset_calls()
    log = run_sync(synced, capture)
    assert log is not None and (log.mode, log.summary, log.moved) == ("changes", "+0 ~0 -0", 0)
    assert dict(state.calls) == {"changes.list": 1}
    assert log.api_calls == 1
    assert chunk_ids(synced) == before


def test_a_shortcut_is_indexed_with_its_targets_content(synced: Folder, tree: Tree, state: DriveState, capture):
    outside = state.add_folder("Elsewhere")
    target = state.add_file("policy.txt", long_text("Shortcut target policy"), parent_id=outside)
    link = state.add_shortcut("policy link", parent_id=tree.root, target_id=target)
    run_sync(synced, capture)
    file = File.objects.get(folder=synced, external_id=link)
    assert file.status == "indexed", file.error
    # Drive's link is the target's: the page a person opens holds the content.
    assert file.source_extra == {
        "shortcut_target_id": target,
        "web_view_link": f"https://drive.google.com/file/d/{target}/view?usp=drivesdk",
    }
    assert Chunk.objects.filter(file=file, text__contains="Shortcut target policy").exists()


def test_changes_are_applied_with_their_chunks(synced: Folder, tree: Tree, state: DriveState, capture) -> None:
    before = chunk_ids(synced)
    state.edit(tree.lease, long_text("Lease, second edition"))
    state.rename(tree.notes, "notes-2024.txt")
    state.move(tree.deep, tree.b)
    new = state.add_file("new.txt", long_text("Brand new"), parent_id=tree.a)
    state.reset_calls()

    log = run_sync(synced, capture)

    assert log is not None and log.mode == "changes" and not log.error
    assert (log.added, log.modified, log.deleted, log.moved) == (1, 1, 0, 2)
    assert log.api_calls == drive_calls(state) - state.calls["files.download"]  # downloads are indexing's
    assert paths(synced) == {"lease.txt", "notes-2024.txt", "b/deep.txt", "doc", "a/new.txt"}
    after = chunk_ids(synced)
    # Renamed and moved files keep their chunks; the edited one has a new set with the new text.
    assert after["notes-2024.txt"] == before["notes.txt"]
    assert after["b/deep.txt"] == before["a/deep.txt"]
    assert after["doc"] == before["doc"]
    assert not after["lease.txt"] & before["lease.txt"]
    assert Chunk.objects.filter(file__path="lease.txt", text__contains="second edition").exists()
    assert File.objects.get(folder=synced, external_id=new).status == "indexed"
    assert_chunks_consistent(synced)


def test_deleted_trashed_and_moved_out_files_go_with_their_chunks(
    synced: Folder, tree: Tree, state: DriveState, capture
) -> None:
    state.delete(tree.lease)
    state.trash(tree.notes)
    state.move(tree.deep, tree.elsewhere)

    log = run_sync(synced, capture)

    assert log is not None and (log.mode, log.deleted, log.added) == ("changes", 3, 0)
    assert paths(synced) == {"doc"}
    assert set(Chunk.objects.filter(folder=synced).values_list("file__path", flat=True)) == {"doc"}

    state.restore(tree.notes)
    log = run_sync(synced, capture)
    assert log is not None and (log.added, log.deleted) == (1, 0)
    assert paths(synced) == {"doc", "notes.txt"}
    assert_chunks_consistent(synced)


def test_a_renamed_subfolder_moves_every_file_under_it(synced: Folder, tree: Tree, state: DriveState, capture):
    before = chunk_ids(synced)
    state.rename(tree.a, "archive")
    log = run_sync(synced, capture)
    assert log is not None and (log.moved, log.modified) == (1, 0)
    assert "archive/deep.txt" in paths(synced)
    assert chunk_ids(synced)["archive/deep.txt"] == before["a/deep.txt"]


def test_a_file_moved_into_the_folder_is_added(synced: Folder, tree: Tree, state: DriveState, capture) -> None:
    outside = state.add_file("outside.txt", long_text("Outside"), parent_id=tree.elsewhere)
    log = run_sync(synced, capture)
    assert log is not None and log.added == 0  # created outside: not ours

    state.move(outside, tree.b)
    log = run_sync(synced, capture)
    assert log is not None and log.added == 1
    assert File.objects.get(folder=synced, path="b/outside.txt").status == "indexed"


def test_a_new_version_of_a_google_doc_is_reindexed(synced: Folder, tree: Tree, state: DriveState, capture):
    state.edit(tree.doc, exports={"text/markdown": b"# Plan B\n\n" + long_text("Doc v2"), "text/plain": b"x"})
    log = run_sync(synced, capture)
    assert log is not None and (log.modified, log.moved) == (1, 0)
    assert Chunk.objects.filter(file__path="doc", text__contains="Plan B").exists()
    assert not Chunk.objects.filter(file__path="doc", text__contains="# Plan\n").exists()


def test_a_stale_full_listing_forces_a_full_diff_that_prunes_drift(
    synced: Folder, state: DriveState, drive_settings, capture
) -> None:
    # Drift the index behind the sync's back: a row Drive never had.
    File.objects.create(folder=synced, external_id="ghost", path="ghost.txt", name="ghost.txt", status="indexed")
    Folder.objects.filter(pk=synced.pk).update(last_full_listing_at=timezone.now() - dt.timedelta(days=2))
    cursor = synced.sync_cursor
    state.add_file("fresh.txt", long_text("Fresh"), parent_id=synced.external_id)

    log = run_sync(synced, capture)

    synced.refresh_from_db()
    assert log is not None and (log.mode, log.added, log.deleted) == ("full", 1, 1)
    assert synced.sync_cursor != cursor
    assert synced.last_full_listing_at > timezone.now() - dt.timedelta(minutes=1)
    assert paths(synced) == TREE_PATHS | {"fresh.txt"}


def test_api_calls_follow_the_changes_not_the_folder(synced: Folder, tree: Tree, state: DriveState, capture):
    for n in range(200):
        state.add_file(f"bulk-{n}.txt", f"bulk {n}".encode(), parent_id=tree.elsewhere)
    state.edit(tree.lease, long_text("Lease v3"))
    state.reset_calls()
    log = run_sync(synced, capture)
    assert log is not None and log.modified == 1
    # One changes page, two folder lookups (Elsewhere, My Drive) that rule out all 200 new files,
    # and the edited file's download for indexing.
    assert dict(state.calls) == {"changes.list": 1, "files.get": 2, "files.download": 1}
    assert log.api_calls == 3


def test_sync_log_api_lists_the_folders_syncs(
    synced: Folder, tree: Tree, state: DriveState, auth_client, other_client, capture
) -> None:
    state.edit(tree.lease, long_text("Lease v4"))
    run_sync(synced, capture)
    response = auth_client.get(f"/api/folders/{synced.pk}/sync-log")
    assert response.status_code == 200
    logs = response.json()["results"]
    assert [(log["mode"], log["summary"]) for log in logs] == [("changes", "+0 ~1 -0"), ("full", "+0 ~0 -0")]
    assert {"api_calls", "duration_ms", "moved", "error", "created_at"} <= set(logs[0])
    assert other_client.get(f"/api/folders/{synced.pk}/sync-log").status_code == 404

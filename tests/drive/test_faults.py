"""Every Drive fault the emulator can inject, its outcome, and the chunks around it.

Each test edits the folder in the emulator, injects a fault, syncs, and checks the folder state
and that every file has exactly its own chunks: none lost, none doubled.
"""

from __future__ import annotations

import pytest

from apps.library.indexing import file_index
from apps.library.models import File, Folder, SyncLog
from apps.library.sources import SourceTransientError
from apps.library.sync import folders_sync_due_enqueue
from emulators.drive.errors import FaultKind
from emulators.drive.state import DriveState
from tests.support.drive_tree import Tree, assert_chunks_consistent, chunk_ids, long_text, paths, run_sync
from workers.sync import sync_folder

pytestmark = pytest.mark.django_db

TRANSIENT = [FaultKind.RATE_LIMITED, FaultKind.USER_RATE_LIMIT, FaultKind.INTERNAL_ERROR, FaultKind.UNAVAILABLE]


@pytest.fixture
def edited(synced: Folder, tree: Tree, state: DriveState) -> dict[str, set[int]]:
    """Pending in Drive: lease.txt edited, notes.txt renamed, a/deep.txt deleted. Returns chunks before."""
    before = chunk_ids(synced)
    state.edit(tree.lease, long_text("Lease, amended"))
    state.rename(tree.notes, "notes-final.txt")
    state.delete(tree.deep)
    return before


def assert_applied(folder: Folder, before: dict[str, set[int]]) -> None:
    after = chunk_ids(folder)
    assert set(after) == {"lease.txt", "notes-final.txt", "doc"}
    assert after["notes-final.txt"] == before["notes.txt"]
    assert after["doc"] == before["doc"]
    assert not after["lease.txt"] & before["lease.txt"]
    assert_chunks_consistent(folder)


def assert_untouched(folder: Folder, before: dict[str, set[int]], cursor: str) -> None:
    folder.refresh_from_db()
    assert folder.sync_cursor == cursor
    assert chunk_ids(folder) == before
    assert_chunks_consistent(folder)


@pytest.mark.parametrize("kind", TRANSIENT, ids=lambda kind: kind.name)
def test_a_passing_rate_limit_or_server_error_is_retried_within_the_sync(
    synced: Folder, edited, state: DriveState, sleeps: list[float], capture, kind: FaultKind
) -> None:
    state.inject(kind, endpoint="changes.list")
    log = run_sync(synced, capture)
    assert log is not None and (log.mode, log.error) == ("changes", "")
    assert (log.added, log.modified, log.deleted, log.moved) == (0, 1, 1, 1)
    assert sleeps == [0.75]  # one backoff: base 1 s, half of it fixed, plus half jitter (0.5 here)
    assert log.api_calls == 2  # the refused call counts too
    assert_applied(synced, edited)


def test_retry_after_is_honoured(synced: Folder, edited, state: DriveState, sleeps: list[float], capture) -> None:
    state.inject(FaultKind.RATE_LIMITED, endpoint="changes.list", retry_after=7)
    log = run_sync(synced, capture)
    assert log is not None and not log.error
    assert sleeps == [7.0]
    assert_applied(synced, edited)


def test_a_retry_after_too_long_to_wait_is_left_to_the_task_queue(
    synced: Folder, edited, state: DriveState, sleeps: list[float], capture
) -> None:
    cursor = synced.sync_cursor
    state.inject(FaultKind.RATE_LIMITED, endpoint="changes.list", retry_after=3600)
    with pytest.raises(SourceTransientError, match="429"):
        run_sync(synced, capture)
    assert sleeps == []
    assert_untouched(synced, edited, cursor)


@pytest.mark.parametrize("kind", TRANSIENT, ids=lambda kind: kind.name)
def test_a_lasting_fault_fails_the_sync_without_touching_the_index_and_the_next_sync_resumes(
    synced: Folder, edited, state: DriveState, sleeps: list[float], capture, kind: FaultKind
) -> None:
    cursor = synced.sync_cursor
    state.inject(kind, endpoint="changes.list", times=3)  # the first try and both retries
    with pytest.raises(SourceTransientError):
        run_sync(synced, capture)
    assert_untouched(synced, edited, cursor)
    synced.refresh_from_db()
    assert synced.sync_started_at is None  # the claim is released for the retry

    log = run_sync(synced, capture)
    assert log is not None and (log.modified, log.deleted, log.moved) == (1, 1, 1)
    assert_applied(synced, edited)


def test_a_fault_halfway_through_reading_changes_applies_none_of_them(
    synced: Folder, edited, tree: Tree, state: DriveState, sleeps: list[float], capture
) -> None:
    # The renamed folder's subtree is listed after the changes page was read: fail there.
    state.rename(tree.b, "b-renamed")
    state.add_file("late.txt", long_text("Late"), parent_id=tree.b)
    cursor = synced.sync_cursor
    state.inject(FaultKind.UNAVAILABLE, endpoint="files.list", file_id=tree.b, times=3)
    with pytest.raises(SourceTransientError):
        run_sync(synced, capture)
    assert_untouched(synced, edited, cursor)

    run_sync(synced, capture)
    assert "b-renamed/late.txt" in paths(synced)


def test_a_fault_halfway_through_a_full_listing_applies_nothing(
    synced: Folder, edited, tree: Tree, state: DriveState, sleeps: list[float], capture
) -> None:
    Folder.objects.filter(pk=synced.pk).update(sync_cursor="")
    state.inject(FaultKind.INTERNAL_ERROR, endpoint="files.list", file_id=tree.a, times=3)
    with pytest.raises(SourceTransientError):
        run_sync(synced, capture)
    assert_untouched(synced, edited, "")

    log = run_sync(synced, capture)
    assert log is not None and log.mode == "full"
    assert_applied(synced, edited)


def test_the_sync_task_retries_a_transient_fault_with_backoff(
    synced: Folder, edited, state: DriveState, sleeps: list[float], drive_settings, inline_indexing
) -> None:
    assert SourceTransientError in sync_folder.autoretry_for
    assert sync_folder.retry_backoff and sync_folder.retry_jitter
    drive_settings.DRIVE_MAX_RETRIES = 0
    state.inject(FaultKind.UNAVAILABLE, endpoint="changes.list", times=2)

    result = sync_folder.apply(args=[synced.pk])  # eager: Celery's retries run at once

    assert result.successful()
    assert state.calls["changes.list"] == 3
    assert SyncLog.objects.filter(folder=synced, mode="changes").count() == 1
    assert_chunks_consistent(synced)


@pytest.mark.parametrize("kind", [FaultKind.INSUFFICIENT_PERMISSIONS, FaultKind.REVOKED], ids=lambda kind: kind.name)
def test_revoked_access_puts_the_folder_in_needs_reauth_and_out_of_the_schedule(
    synced: Folder, edited, state: DriveState, capture, kind: FaultKind
) -> None:
    cursor = synced.sync_cursor
    state.inject(kind, endpoint="changes.list")
    log = run_sync(synced, capture)
    synced.refresh_from_db()
    assert log is not None and "reconnect Google Drive" in log.error
    assert synced.status == "needs_reauth" and "reconnect Google Drive" in synced.last_error
    assert_untouched(synced, edited, cursor)
    Folder.objects.filter(pk=synced.pk).update(last_synced_at=None)
    assert synced.pk not in folders_sync_due_enqueue()


def test_a_revoked_refresh_token_puts_the_folder_in_needs_reauth(
    synced: Folder, edited, state: DriveState, capture, user
) -> None:
    from apps.connectors.models import DriveCredential

    DriveCredential.objects.create(owner=user, access_token="expired-access", refresh_token="revoked-refresh")
    DriveCredential.objects.update(token_expiry="2000-01-01T00:00:00Z")
    state.revoked_refresh_tokens.add("revoked-refresh")
    log = run_sync(synced, capture)
    synced.refresh_from_db()
    assert log is not None and synced.status == "needs_reauth"
    assert "revoked or has expired" in synced.last_error
    assert chunk_ids(synced) == edited


def test_a_folder_gone_from_drive_is_an_error_and_keeps_its_index(
    synced: Folder, edited, state: DriveState, capture
) -> None:
    Folder.objects.filter(pk=synced.pk).update(sync_cursor="")
    state.inject(FaultKind.NOT_FOUND, endpoint="files.get", file_id=synced.external_id)
    log = run_sync(synced, capture)
    synced.refresh_from_db()
    assert log is not None and log.error == "folder not found"
    assert (synced.status, synced.last_error) == ("error", "folder not found")
    assert chunk_ids(synced) == edited

    run_sync(synced, capture)  # the fault was one-off: the folder recovers
    synced.refresh_from_db()
    assert synced.status == "ready" and synced.last_error == ""
    assert_applied(synced, edited)


def test_a_folder_deleted_in_drive_is_reported_from_the_changes_log(
    synced: Folder, edited, tree: Tree, state: DriveState, capture
) -> None:
    state.delete(tree.root)
    log = run_sync(synced, capture)
    synced.refresh_from_db()
    assert log is not None and synced.status == "error"
    assert synced.last_error.startswith("folder not found")
    assert chunk_ids(synced) == edited


def test_an_expired_cursor_falls_back_to_a_full_diff(synced: Folder, edited, state: DriveState, capture) -> None:
    cursor = synced.sync_cursor
    state.inject(FaultKind.PAGE_TOKEN_EXPIRED, endpoint="changes.list")
    log = run_sync(synced, capture)
    synced.refresh_from_db()
    assert log is not None and log.mode == "full" and not log.error
    assert (log.modified, log.deleted, log.moved) == (1, 1, 1)
    assert synced.sync_cursor and synced.sync_cursor != cursor
    assert state.calls["changes.getStartPageToken"] == 2  # the first sync's, and this one's
    assert_applied(synced, edited)


def test_a_cursor_past_the_change_retention_falls_back_to_a_full_diff(
    synced: Folder, edited, state: DriveState, capture
) -> None:
    state.change_retention = 1
    log = run_sync(synced, capture)
    assert log is not None and log.mode == "full"
    assert_applied(synced, edited)


def test_a_download_fault_while_reindexing_ends_with_one_set_of_chunks(
    synced: Folder, edited, tree: Tree, state: DriveState, sleeps: list[float], capture, monkeypatch
) -> None:
    queued: list[list[int]] = []
    monkeypatch.setattr(
        "apps.library.enqueue.index_files", lambda file_ids, task_id, **options: queued.append(file_ids)
    )
    run_sync(synced, capture)
    lease = File.objects.get(folder=synced, path="lease.txt")
    assert queued == [[lease.pk]]
    state.inject(FaultKind.UNAVAILABLE, endpoint="files.download", file_id=tree.lease, times=3)

    with pytest.raises(SourceTransientError):
        file_index(file_id=lease.pk, task_id="task-1")
    file_index(file_id=lease.pk, task_id="task-1")  # Celery's retry: same task id

    assert_applied(synced, edited)

import datetime as dt
import os

import pytest
from django.utils import timezone

from apps.connectors.local import LocalSource
from apps.library.indexing import folder_index
from apps.library.models import Chunk, File, Folder, SyncLog
from apps.library.reconcile import folder_reconcile
from apps.library.sources import SYNCERS
from apps.library.sync import folder_sync, folders_sync_due_enqueue
from tests.support.files import write

pytestmark = pytest.mark.django_db


@pytest.fixture
def indexed(root, folder):
    write(root, "inbox/invoice.txt", "Invoice INV-20931 from Dana Whitfield")
    write(root, "notes/keep.txt", "unchanged note")
    write(root, "notes/edit.txt", "first version")
    write(root, "notes/drop.txt", "to be deleted")
    folder_index(folder_id=folder.pk, inline=True)
    return root


def chunk_ids(path):
    return set(Chunk.objects.filter(file__path=path).values_list("id", flat=True))


def test_reconcile_adds_modifies_deletes_and_moves(indexed, folder):
    invoice_chunks = chunk_ids("inbox/invoice.txt")
    invoice_id = File.objects.get(path="inbox/invoice.txt").pk
    os.rename(indexed / "inbox/invoice.txt", indexed / "finance-invoice.txt")
    (indexed / "notes/edit.txt").write_text("second version")
    (indexed / "notes/drop.txt").unlink()
    write(indexed, "notes/new.txt", "brand new")
    source = LocalSource(indexed)
    result = folder_reconcile(folder=folder, entries=source.list_entries(), problems=source.problems())
    assert (result.added, result.modified, result.deleted, result.moved, result.unchanged) == (1, 1, 1, 1, 1)
    moved = File.objects.get(pk=invoice_id)
    assert (moved.path, moved.external_id, moved.name, moved.status) == (
        "finance-invoice.txt",
        "finance-invoice.txt",
        "finance-invoice.txt",
        "indexed",
    )
    assert chunk_ids("finance-invoice.txt") == invoice_chunks  # kept, not re-embedded
    assert not File.objects.filter(path="notes/drop.txt").exists()
    assert File.objects.get(path="notes/edit.txt").status == "pending"
    assert chunk_ids("notes/edit.txt")  # old chunks stay searchable until replaced
    queued = set(File.objects.filter(pk__in=result.to_index).values_list("path", flat=True))
    assert queued == {"notes/edit.txt", "notes/new.txt"}


def test_same_external_id_at_a_new_path_is_a_move(indexed, folder):
    entries = list(LocalSource(indexed).list_entries())
    renamed = [
        entry if entry.path != "notes/keep.txt" else entry.__class__(**{**entry.__dict__, "path": "archive/keep.txt"})
        for entry in entries
    ]
    result = folder_reconcile(folder=folder, entries=renamed)
    assert (result.moved, result.added, result.deleted) == (1, 0, 0)
    assert File.objects.get(external_id="notes/keep.txt").path == "archive/keep.txt"


def test_problems_become_skipped_rows_with_the_reason(indexed, folder, tmp_path):
    os.symlink(write(tmp_path, "outside.txt", "secret"), indexed / "escape.txt")
    folder_index(folder_id=folder.pk, inline=True)
    file = File.objects.get(path="escape.txt")
    assert file.status == "skipped" and "outside the folder" in file.error
    folder.refresh_from_db()
    assert folder.status == "ready" and folder.files_total == 5 and folder.files_indexed == 4


def test_sync_writes_a_log_and_queues_changed_files(indexed, folder, monkeypatch, django_capture_on_commit_callbacks):
    (indexed / "notes/edit.txt").write_text("second version")
    write(indexed, "notes/new.txt", "brand new")
    sent = []
    monkeypatch.setattr("apps.library.enqueue.index_files", lambda file_ids, task_id, **options: sent.extend(file_ids))
    with django_capture_on_commit_callbacks(execute=True):
        log = folder_sync(folder_id=folder.pk)
    assert log is not None and (log.mode, log.added, log.modified, log.deleted, log.moved) == ("full", 1, 1, 0, 0)
    assert log.summary == "+1 ~1 -0"
    assert set(File.objects.filter(pk__in=sent).values_list("path", flat=True)) == {"notes/edit.txt", "notes/new.txt"}
    folder.refresh_from_db()
    assert folder.sync_started_at is None and folder.last_synced_at is not None and folder.status == "indexing"


def test_sync_reuses_checksums_of_files_whose_size_and_mtime_are_unchanged(indexed, folder, monkeypatch):
    from apps.connectors.local import LocalSource

    hashed = []
    real = LocalSource._sha256
    monkeypatch.setattr(LocalSource, "_sha256", lambda self, relative: hashed.append(relative) or real(self, relative))
    write(indexed, "notes/new.txt", "brand new")
    folder_sync(folder_id=folder.pk)
    assert hashed == ["notes/new.txt"]


def test_a_folder_never_syncs_twice_at_once_but_stale_claims_are_retaken(indexed, folder):
    Folder.objects.filter(pk=folder.pk).update(sync_started_at=timezone.now())
    assert folder_sync(folder_id=folder.pk) is None
    assert not SyncLog.objects.filter(folder=folder).exists()
    Folder.objects.filter(pk=folder.pk).update(sync_started_at=timezone.now() - dt.timedelta(hours=2))
    assert folder_sync(folder_id=folder.pk) is not None
    folder.refresh_from_db()
    assert folder.sync_started_at is None


def test_sync_of_a_vanished_root_records_the_error(root, folder):
    root.rmdir()
    log = folder_sync(folder_id=folder.pk)
    assert log is not None and "no longer exists" in log.error
    folder.refresh_from_db()
    assert folder.status == "error" and folder.sync_started_at is None


def test_due_folders_are_those_past_their_interval_with_a_sync_function(
    user, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    now = timezone.now()

    def make(name, **fields):
        return Folder.objects.create(
            owner=user,
            source=fields.pop("source", "local"),
            external_id=name,
            name=name,
            sync_interval_seconds=600,
            **fields,
        )

    never = make("never")
    overdue = make("overdue", last_synced_at=now - dt.timedelta(seconds=601))
    make("fresh", last_synced_at=now - dt.timedelta(seconds=60))
    make("running", last_synced_at=None, sync_started_at=now)
    make("reauth", status="needs_reauth")
    make("drive", source="drive") if "drive" not in SYNCERS else None
    sent = []
    monkeypatch.setattr("apps.library.enqueue.sync_folder", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        due = folders_sync_due_enqueue(now=now)
    assert sorted(due) == sorted(sent) == sorted([never.pk, overdue.pk])

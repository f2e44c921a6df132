"""Uploads into a Drive folder's inbox: a real multipart files.create through googleapiclient (the
emulator at the wire), indexed at once, and found unchanged by the next sync."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.library.models import File, Folder
from emulators.drive.state import DriveState
from tests.support.drive_tree import Tree, run_sync

NOTE = b"Renter's insurance renews on March 1; the premium is 180 dollars a year.\n"


def test_an_upload_into_a_drive_folder_is_created_there_indexed_and_kept_by_the_next_sync(
    synced: Folder, state: DriveState, tree: Tree, auth_client, capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", lambda file_id: None)

    def upload():
        with capture(execute=True):
            file = SimpleUploadedFile("insurance.txt", NOTE, content_type="text/plain")
            return auth_client.post("/api/inbox/files", {"folder_id": synced.pk, "file": file}, format="multipart")

    first, second = upload(), upload()

    assert (first.status_code, second.status_code) == (201, 201), (first.content, second.content)
    assert [first.json()["path"], second.json()["path"]] == ["inbox/insurance.txt", "inbox/insurance (2).txt"]
    uploaded = File.objects.get(pk=first.json()["file_id"])
    assert uploaded.status == "indexed"
    item = state.item(uploaded.external_id)
    assert item.content == NOTE and state.item(item.parents[0]).name == "inbox"
    assert state.item(item.parents[0]).parents == [tree.root]

    log = run_sync(synced, capture)
    assert log is not None and not log.error
    assert (log.added, log.modified, log.deleted) == (0, 0, 0)
    assert File.objects.filter(folder=synced, path__startswith="inbox/").count() == 2

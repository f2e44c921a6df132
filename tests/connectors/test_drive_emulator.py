"""The emulator's own fidelity: the Drive behaviours the source relies on, seen by the real client."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from googleapiclient.errors import HttpError

from apps.connectors.drive import mimes
from emulators.drive.server import seed_from_directory
from emulators.drive.state import DriveState
from tests.support.drive_connector_tree import Tree
from tests.support.servers import BASE_DIR


def _reason(error: HttpError) -> tuple[int, str]:
    return error.resp.status, json.loads(error.content)["error"]["errors"][0]["reason"]


def test_media_download_uses_the_drive_path(service: Any, state: DriveState, tree: Tree) -> None:
    request = service.files().get_media(fileId=tree.readme)

    assert "/drive/v3/files/" in request.uri and "alt=media" in request.uri
    assert request.execute() == b"read me first"
    assert state.calls["files.download"] == 1


def test_google_docs_cannot_be_downloaded_only_exported(service: Any, tree: Tree) -> None:
    with pytest.raises(HttpError) as raised:
        service.files().get_media(fileId=tree.notes).execute()

    assert _reason(raised.value) == (403, "fileNotDownloadable")
    assert service.files().export_media(fileId=tree.notes, mimeType="text/plain").execute() == b"Notes"


def test_without_fields_drive_returns_a_thin_resource(service: Any, tree: Tree) -> None:
    assert service.files().get(fileId=tree.readme).execute() == {
        "kind": "drive#file",
        "id": tree.readme,
        "name": "readme.txt",
        "mimeType": "text/plain",
    }


def test_fields_mask_selects_nested_fields(service: Any, tree: Tree) -> None:
    result = service.files().list(q=f"'{tree.root}' in parents", fields="files(name)", pageSize=1).execute()

    assert result == {"files": [{"name": "inbox"}]}  # nextPageToken exists but was not asked for


def test_invalid_field_is_rejected(service: Any, tree: Tree) -> None:
    with pytest.raises(HttpError) as raised:
        service.files().get(fileId=tree.readme, fields="id,nmae").execute()

    assert _reason(raised.value) == (400, "invalidParameter")


def test_query_language(service: Any, state: DriveState, tree: Tree) -> None:
    state.trash(tree.readme)

    def names(q: str) -> set[str]:
        return {file["name"] for file in service.files().list(q=q, fields="files(name)").execute()["files"]}

    assert names(f"'{tree.root}' in parents and trashed = true") == {"readme.txt"}
    assert names(f"'{tree.root}' in parents and mimeType = '{mimes.FOLDER}'") == {"inbox", "2023"}
    either_folder = f"('{tree.inbox}' in parents or '{tree.scans}' in parents)"
    assert names(f"{either_folder} and mimeType != '{mimes.FOLDER}'") == {"W2_2024.pdf", "receipt.png"}
    assert names(f"'{tree.root}' in parents and name = 'notes'") == {"notes"}


def test_unknown_parent_in_query_is_not_found(service: Any) -> None:
    with pytest.raises(HttpError) as raised:
        service.files().list(q="'nope' in parents").execute()

    assert _reason(raised.value) == (404, "notFound")


def test_shared_drive_items_need_both_flags(service: Any, state: DriveState) -> None:
    drive_id = state.add_shared_drive("Team")
    state.add_file("plan.txt", b"plan", parent_id=drive_id)
    query = f"'{drive_id}' in parents"

    with pytest.raises(HttpError):
        service.files().list(q=query).execute()
    flagged = service.files().list(q=query, supportsAllDrives=True, includeItemsFromAllDrives=True).execute()
    assert [file["name"] for file in flagged["files"]] == ["plan.txt"]


def test_a_file_cannot_gain_a_second_parent(service: Any, tree: Tree) -> None:
    with pytest.raises(HttpError) as raised:
        service.files().update(fileId=tree.readme, addParents=tree.inbox).execute()

    assert _reason(raised.value) == (403, "cannotAddParent")


def test_seed_from_directory(tmp_path: Path) -> None:
    (tmp_path / "sample" / "inbox").mkdir(parents=True)
    (tmp_path / "sample" / "inbox" / "W2.pdf").write_bytes(b"%PDF")
    (tmp_path / "sample" / "plan.gdoc.md").write_text("# Plan")
    (tmp_path / "sample" / "budget.gsheet.csv").write_text("a,b")
    (tmp_path / "sample" / ".DS_Store").write_bytes(b"junk")
    state = DriveState()

    folder_id = seed_from_directory(state, tmp_path / "sample")

    found = state.search(lambda item: True, all_drives=True, drive_id=None)
    items = {resource["name"]: resource for resource in found}
    assert set(items) == {"sample", "inbox", "W2.pdf", "plan", "budget"}
    assert items["sample"]["id"] == folder_id
    assert (items["W2.pdf"]["mimeType"], items["W2.pdf"]["parents"]) == (
        "application/pdf",
        [items["inbox"]["id"]],
    )
    assert items["plan"]["mimeType"] == mimes.DOCUMENT
    assert state.item(items["plan"]["id"]).exports == {"text/markdown": b"# Plan", "text/plain": b"# Plan"}
    assert state.item(items["budget"]["id"]).exports == {"text/csv": b"a,b"}


def test_management_command_serves_a_seeded_folder(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("hello")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "drive_emulator", "--root", str(tmp_path / "docs"), "--port", "0"],
        cwd=BASE_DIR,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        endpoint = lines[1].strip().removeprefix("DRIVE_API_ENDPOINT=")
        folder_id = lines[2].split()[-1]
        url = f"{endpoint}files?q=%27{folder_id}%27+in+parents&fields=files(name)"
        with urllib.request.urlopen(url, timeout=10) as response:
            assert json.load(response) == {"files": [{"name": "a.txt"}]}
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_shared_drives_are_listed_a_page_at_a_time(service: Any, state: DriveState) -> None:
    ids = [state.add_shared_drive(f"Team {number}") for number in range(3)]

    first = service.drives().list(pageSize=2, fields="nextPageToken,drives(id,name)").execute()
    rest = service.drives().list(pageSize=2, pageToken=first["nextPageToken"]).execute()

    assert [drive["id"] for drive in first["drives"] + rest["drives"]] == ids
    assert first["drives"][0] == {"id": ids[0], "name": "Team 0"} and "nextPageToken" not in rest


def test_name_contains_matches_case_insensitively_and_root_is_my_drive(service: Any, state: DriveState) -> None:
    state.add_folder("Tax Returns")
    state.add_folder("receipts")
    team = state.add_shared_drive("Team")
    state.add_folder("Old TAX papers", parent_id=team)

    query = f"name contains 'tax' and mimeType = '{mimes.FOLDER}'"
    mine = service.files().list(q=query).execute()["files"]
    everywhere = (
        service.files()
        .list(q=query, corpora="allDrives", supportsAllDrives=True, includeItemsFromAllDrives=True, orderBy="name")
        .execute()["files"]
    )
    at_root = service.files().list(q="'root' in parents", orderBy="name").execute()["files"]

    assert [item["name"] for item in mine] == ["Tax Returns"]
    assert [item["name"] for item in everywhere] == ["Old TAX papers", "Tax Returns"]
    assert [item["name"] for item in at_root] == ["receipts", "Tax Returns"]

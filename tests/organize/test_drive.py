"""Accepting a suggestion in a Drive folder: files.update moves it, through the real Google client,
against the Drive emulator; the index follows without re-embedding and the next sync agrees."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from apps.library.indexing import folder_index
from apps.library.models import Chunk, File, Folder
from apps.library.sources import source_for
from apps.library.sync import folder_sync
from apps.organize.guideline import guideline_line_append, guideline_read
from apps.organize.services import file_suggest, suggestion_create
from emulators.drive.state import DriveState

pytestmark = pytest.mark.django_db

GUIDELINE = b"# Where things go\n\n- A W-2 or 1099 always goes to `taxes/`.\n- Receipts go to `finance/`.\n"
W2 = b"Form W-2 Wage and Tax Statement 2024. Employer: Contoso Ltd. Wages 84,500. Federal tax withheld 12,300."


@dataclass
class DriveFolder:
    state: DriveState
    folder: Folder
    ids: dict[str, str]


@pytest.fixture
def drive(emulator, settings, user, queued_suggestions, django_capture_on_commit_callbacks) -> DriveFolder:
    settings.DRIVE_API_ENDPOINT = emulator.url
    settings.GOOGLE_SERVICE_ACCOUNT_FILE = ""
    state = emulator.state
    root = state.add_folder("Docs")
    ids = {
        "root": root,
        "inbox": state.add_folder("inbox", parent_id=root),
        "taxes": state.add_folder("taxes", parent_id=root),
    }
    ids["guideline"] = state.add_file("guideline.md", GUIDELINE, parent_id=root, mime_type="text/markdown")
    ids["w2"] = state.add_file("W2_2024.txt", W2, parent_id=ids["inbox"])
    ids["old"] = state.add_file("W2_2023.txt", W2.replace(b"2024", b"2023"), parent_id=ids["taxes"])
    folder = Folder.objects.create(owner=user, source="drive", external_id=root, name="Docs")
    with django_capture_on_commit_callbacks(execute=True):
        folder_index(folder_id=folder.pk, inline=True)
    return DriveFolder(state=state, folder=folder, ids=ids)


def chunk_ids(file: File) -> list[int]:
    return sorted(Chunk.objects.filter(file=file).values_list("id", flat=True))


def test_accept_moves_the_drive_file_with_files_update_and_keeps_its_chunks(auth_client, drive):
    w2 = File.objects.get(folder=drive.folder, path="inbox/W2_2024.txt")
    chunks = chunk_ids(w2)
    suggestion = file_suggest(file_id=w2.pk).suggestion
    assert suggestion is not None and suggestion.target_folder == "taxes/"
    drive.state.reset_calls()

    response = auth_client.post(f"/api/inbox/suggestions/{suggestion.pk}/respond", {"action": "accept"}, format="json")

    assert response.status_code == 200, response.json()
    assert drive.state.item(drive.ids["w2"]).parents == [drive.ids["taxes"]]
    w2.refresh_from_db()
    assert (w2.path, w2.external_id, w2.checksum) == ("taxes/W2_2024.txt", drive.ids["w2"], w2.indexed_checksum)
    assert chunk_ids(w2) == chunks
    log = folder_sync(folder_id=drive.folder.pk)
    assert log is not None and not log.error and (log.added, log.modified, log.deleted) == (0, 0, 0)
    w2.refresh_from_db()
    assert w2.path == "taxes/W2_2024.txt" and chunk_ids(w2) == chunks


def test_choose_creates_the_drive_folder_and_undo_moves_it_back(auth_client, drive):
    w2 = File.objects.get(folder=drive.folder, path="inbox/W2_2024.txt")
    suggestion = file_suggest(file_id=w2.pk).suggestion

    response = auth_client.post(
        f"/api/inbox/suggestions/{suggestion.pk}/respond",
        {"action": "choose", "target_folder": "taxes/2024/"},
        format="json",
    )

    assert response.status_code == 200, response.json()
    parent = drive.state.item(drive.state.item(drive.ids["w2"]).parents[0])
    assert parent.name == "2024" and parent.parents == [drive.ids["taxes"]]
    undo = auth_client.post(f"/api/inbox/moves/{response.json()['move']['id']}/undo")
    assert undo.status_code == 200
    assert drive.state.item(drive.ids["w2"]).parents == [drive.ids["inbox"]]
    w2.refresh_from_db()
    assert w2.path == "inbox/W2_2024.txt"


def test_a_namesake_in_the_drive_target_is_a_conflict(auth_client, drive):
    w2 = File.objects.get(folder=drive.folder, path="inbox/W2_2024.txt")
    suggestion = file_suggest(file_id=w2.pk).suggestion
    drive.state.add_file("W2_2024.txt", b"another", parent_id=drive.ids["taxes"])

    response = auth_client.post(f"/api/inbox/suggestions/{suggestion.pk}/respond", {"action": "accept"}, format="json")

    assert response.status_code == 409 and "already exists" in response.json()["detail"]
    assert drive.state.item(drive.ids["w2"]).parents == [drive.ids["inbox"]]
    w2.refresh_from_db()
    assert w2.path == "inbox/W2_2024.txt"


def test_accept_moves_a_drive_shortcut_checking_its_target_content(
    auth_client, drive, django_capture_on_commit_callbacks
):
    """A shortcut's content is its target's: the move reads the target, not the shortcut itself."""
    target = drive.state.add_file("W2_2022.txt", W2.replace(b"2024", b"2022"), parent_id=drive.ids["taxes"])
    link = drive.state.add_shortcut("W2_2022 link", parent_id=drive.ids["inbox"], target_id=target)
    with django_capture_on_commit_callbacks(execute=True):
        folder_index(folder_id=drive.folder.pk, inline=True)
    shortcut = File.objects.get(folder=drive.folder, external_id=link)
    assert shortcut.source_extra and shortcut.status == "indexed"
    suggestion = suggestion_create(file=shortcut, target="taxes/", reasoning="a W-2", confidence=0.9)

    response = auth_client.post(f"/api/inbox/suggestions/{suggestion.pk}/respond", {"action": "accept"}, format="json")

    assert response.status_code == 200, response.json()
    assert drive.state.item(link).parents == [drive.ids["taxes"]]
    assert drive.state.item(target).parents == [drive.ids["taxes"]]
    shortcut.refresh_from_db()
    assert shortcut.path == "taxes/W2_2022 link" and shortcut.checksum == shortcut.indexed_checksum


def test_a_remembered_line_is_written_to_the_drive_guideline_with_the_real_client(drive):
    line = "- Payslips go in `work/payroll/`."

    assert guideline_line_append(folder=drive.folder, line=line) is True

    assert drive.state.item(drive.ids["guideline"]).content == GUIDELINE + b"\n" + line.encode() + b"\n"
    assert guideline_read(folder=drive.folder).endswith(f"{line}\n")  # read back at once, by its id
    assert guideline_line_append(folder=drive.folder, line=line) is False  # there already: not written twice


def test_writing_a_new_drive_file_creates_it_and_its_folder(drive):
    text = b"- Receipts go to `finance/`.\n"

    entry = source_for(folder=drive.folder).overwrite("notes/guideline.md", text, mime_type="text/markdown")

    created = drive.state.item(entry.external_id)
    assert (created.name, created.content, entry.path) == ("guideline.md", text, "notes/guideline.md")
    assert drive.state.item(created.parents[0]).name == "notes"
    assert drive.state.item(created.parents[0]).parents == [drive.ids["root"]]

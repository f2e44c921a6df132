"""The content endpoint and document page on a Drive folder: bytes through the real client against
the emulator with the folder's credentials, Docs exported (Office first), Drive's own link kept."""

from __future__ import annotations

import pytest

from apps.connectors.drive import mimes
from apps.library.models import File, Folder
from emulators.drive.state import DriveState
from tests.support.drive_tree import Tree, long_text
from tests.support.originals import body

pytestmark = pytest.mark.django_db


def file_at(folder: Folder, path: str) -> File:
    return File.objects.get(folder=folder, path=path)


def test_a_drive_file_is_downloaded_whole_or_by_range(synced: Folder, auth_client) -> None:
    lease = file_at(synced, "lease.txt")
    response = auth_client.get(f"/api/files/{lease.pk}/content")
    assert response.status_code == 200
    assert body(response) == long_text("Lease")
    assert response["Content-Disposition"] == 'attachment; filename="lease.txt"'
    assert response["X-Content-Type-Options"] == "nosniff"
    ranged = auth_client.get(f"/api/files/{lease.pk}/content", HTTP_RANGE="bytes=0-4")
    assert ranged.status_code == 206
    assert body(ranged) == long_text("Lease")[:5]


def test_a_google_doc_is_served_as_its_export_office_first(synced: Folder, auth_client, state: DriveState) -> None:
    doc = file_at(synced, "doc")
    # The emulator's doc offers no docx: Drive's 400 for that conversion falls back to markdown.
    response = auth_client.get(f"/api/files/{doc.pk}/content")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown"
    assert response["Content-Disposition"] == 'attachment; filename="doc.md"'
    assert body(response).startswith(b"# Plan")
    state.edit(doc.external_id, exports={mimes.DOCX: b"PK docx bytes", "text/markdown": b"# Plan"})
    response = auth_client.get(f"/api/files/{doc.pk}/content")
    assert response["Content-Type"] == mimes.DOCX
    assert response["Content-Disposition"] == 'attachment; filename="doc.docx"'
    assert body(response) == b"PK docx bytes"


def test_listing_keeps_drive_s_link_and_the_page_offers_it(synced: Folder, web_client, tree: Tree) -> None:
    lease = file_at(synced, "lease.txt")
    link = f"https://drive.google.com/file/d/{tree.lease}/view?usp=drivesdk"
    assert lease.source_extra["web_view_link"] == link
    assert file_at(synced, "doc").source_extra["web_view_link"].startswith("https://docs.google.com/document/d/")
    html = web_client.get(f"/files/{lease.pk}").content.decode()
    assert f'href="{link}"' in html and "Open in Google Drive" in html


def test_a_file_gone_from_drive_is_a_404_and_another_user_sees_nothing(
    synced: Folder, auth_client, other_client, state: DriveState
) -> None:
    notes = file_at(synced, "notes.txt")
    assert other_client.get(f"/api/files/{notes.pk}/content").status_code == 404
    state.delete(notes.external_id)
    response = auth_client.get(f"/api/files/{notes.pk}/content")
    assert response.status_code == 404
    assert "no longer in its folder" in response.json()["detail"]

"""Drive files for the content endpoint's tests: in the emulator and listed, without indexing them."""

from __future__ import annotations

from apps.connectors.drive.entries import WEB_VIEW_LINK
from apps.library.models import File, Folder
from emulators.drive.state import DriveState, web_view_link


def drive_file(
    state: DriveState, *, folder: Folder, name: str, content: bytes, mime_type: str = "application/pdf"
) -> File:
    """`content` as `name` in the folder's Drive folder, and its row as a sync would have listed it."""
    file_id = state.add_file(name, content, parent_id=folder.external_id, mime_type=mime_type)
    return File.objects.create(
        folder=folder,
        external_id=file_id,
        path=name,
        name=name,
        mime_type=mime_type,
        size=len(content),
        status="indexed",
        source_extra={WEB_VIEW_LINK: web_view_link(file_id, mime_type)},
    )

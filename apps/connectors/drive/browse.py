"""Read-only browsing of a user's Drive for the folder picker: folders only, one page at a time.

My Drive and each shared drive are browsed the same way, a parent's child folders, with a
breadcrumb trail up to the drive's root; a name search looks across every drive the user can
read. Nothing here writes to Drive or stores anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apps.connectors.drive import mimes
from apps.connectors.drive.api import DriveApi, quote
from apps.connectors.drive.client import RetryPolicy, execute
from apps.library.sources import SourceError

MY_DRIVE = "root"
_FOLDER_FIELDS = "id,name,parents,driveId"
_MAX_DEPTH = 30  # breadcrumbs stop here: Drive folders are rarely this deep, a cycle never ends


@dataclass(frozen=True)
class DriveFolder:
    id: str
    name: str
    drive_id: str | None = None


@dataclass
class FolderPage:
    folders: list[DriveFolder]
    next_page_token: str | None
    breadcrumbs: list[DriveFolder] = field(default_factory=list)
    drives: list[DriveFolder] = field(default_factory=list)


class DriveBrowser:
    def __init__(self, service: Any, *, retry: RetryPolicy, page_size: int = 50) -> None:
        self._service = service
        self._api = DriveApi(service, retry=retry, page_size=page_size)
        self._retry = retry
        self._page_size = page_size

    def folders(
        self, *, parent: str = MY_DRIVE, drive: str | None = None, name: str = "", page_token: str | None = None
    ) -> FolderPage:
        """Child folders of ``parent`` (in shared drive ``drive``), or, with ``name`` and no parent,
        folders anywhere whose name contains it. The first page of My Drive's root also lists the
        shared drives."""
        terms = [f"mimeType = {quote(mimes.FOLDER)}", "trashed = false"]
        searching_everywhere = bool(name) and not parent
        if not searching_everywhere:
            terms.append(f"{quote(parent or drive or MY_DRIVE)} in parents")
        if name:
            terms.append(f"name contains {quote(name)}")
        scope: dict[str, Any] = {"corpora": "allDrives"} if searching_everywhere else {"corpora": "user"}
        if drive and not searching_everywhere:
            scope = {"corpora": "drive", "driveId": drive}
        request = self._service.files().list(
            q=" and ".join(terms),
            fields=f"nextPageToken,files({_FOLDER_FIELDS})",
            orderBy="name",
            pageSize=self._page_size,
            pageToken=page_token or None,
            supportsAllDrives=True,
            includeItemsFromAllDrives=True,
            **scope,
        )
        result = execute(request, retry=self._retry, not_found="folder not found")
        page = FolderPage(
            folders=[_folder(item) for item in result.get("files", [])],
            next_page_token=result.get("nextPageToken"),
        )
        if not searching_everywhere:
            page.breadcrumbs = self._trail(parent or drive or MY_DRIVE)
        if not parent and not drive and not name and not page_token:
            page.drives = self._shared_drives()
        return page

    def folder(self, folder_id: str) -> DriveFolder:
        """One folder the user can read; SourceNotFoundError otherwise (absent or not shared)."""
        item = self._api.get(folder_id, not_found="folder not found")
        if item.get("mimeType") != mimes.FOLDER:
            raise SourceError("This Drive item is not a folder; pick a folder.")
        return _folder(item)

    def _trail(self, folder_id: str) -> list[DriveFolder]:
        trail: list[DriveFolder] = []
        current: str | None = folder_id
        while current and len(trail) < _MAX_DEPTH:
            item = self._api.get(current, not_found="folder not found")
            trail.append(_folder(item))
            parents = item.get("parents") or []
            current = parents[0] if parents else None
        trail.reverse()
        return trail

    def _shared_drives(self) -> list[DriveFolder]:
        drives: list[DriveFolder] = []
        page_token: str | None = None
        while True:
            request = self._service.drives().list(
                fields="nextPageToken,drives(id,name)", pageSize=100, pageToken=page_token
            )
            result = execute(request, retry=self._retry)
            drives += [DriveFolder(id=item["id"], name=item["name"], drive_id=item["id"]) for item in result["drives"]]
            page_token = result.get("nextPageToken")
            if not page_token:
                return drives


def _folder(item: dict[str, Any]) -> DriveFolder:
    return DriveFolder(id=item["id"], name=item["name"], drive_id=item.get("driveId"))

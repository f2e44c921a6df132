"""Reading Drive's change log into a ``ChangeSet`` for one folder.

The change log covers the user's whole Drive and says where a file is now, not where it was.
So each changed file's ancestors are walked up to the folder root (cached per call): a file
that no longer reaches the root was moved out or trashed and counts as removed. A changed folder
changes the paths (or presence) of everything beneath it, which the log does not repeat, so its
subtree is listed. The cost follows the changes, never the folder's size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_noop

from apps.connectors.drive import mimes
from apps.connectors.drive.api import DriveApi
from apps.connectors.drive.entries import EntryBuilder, path_component, walk
from apps.library.sources import ChangeSet, SourceEntry, SourceNotFoundError


@dataclass(frozen=True)
class _Folder:
    name: str
    parent_id: str | None
    trashed: bool

    @classmethod
    def of(cls, meta: dict[str, Any]) -> _Folder:
        parents = meta.get("parents") or [None]
        return cls(name=meta["name"], parent_id=parents[0], trashed=bool(meta.get("trashed")))


class ChangeReader:
    def __init__(self, api: DriveApi, builder: EntryBuilder, *, root_id: str, folders_per_query: int) -> None:
        self._api = api
        self._builder = builder
        self._root_id = root_id
        self._folders_per_query = folders_per_query
        self._folders: dict[str, _Folder | None] = {}
        self._upserted: dict[str, SourceEntry] = {}
        self._removed: dict[str, None] = {}  # an ordered set

    def read(self, cursor: str) -> ChangeSet:
        page_token = cursor
        while True:
            page = self._api.changes(page_token)
            # Shared drive changes (changeType "drive") concern the drive itself, not files.
            changes = [change for change in page.get("changes", []) if change.get("changeType") == "file"]
            for change in changes:
                # Folders in this page are current: no need to fetch them during ancestor walks.
                meta = change.get("file")
                if meta and meta["mimeType"] == mimes.FOLDER:
                    self._folders[meta["id"]] = _Folder.of(meta)
            for change in changes:
                self._apply(change)
            if "newStartPageToken" in page:
                return ChangeSet(
                    upserted=list(self._upserted.values()),
                    removed_ids=list(self._removed),
                    cursor=page["newStartPageToken"],
                )
            page_token = page["nextPageToken"]

    def _apply(self, change: dict[str, Any]) -> None:
        file_id = change["fileId"]
        meta = None if change.get("removed") else change.get("file")
        if file_id == self._root_id:
            if meta is None or meta.get("trashed"):
                raise SourceNotFoundError(gettext_noop("folder was deleted or moved to the trash"))
            return
        if meta is None:
            self._remove(file_id)
            return
        path = self._path_of(meta)
        if meta["mimeType"] == mimes.FOLDER:
            self._apply_folder(meta, path)
            return
        entry = self._builder.build(meta, path) if path is not None else None
        if entry is None:
            self._remove(file_id)
        else:
            self._upsert(entry)

    def _apply_folder(self, meta: dict[str, Any], path: str | None) -> None:
        """Re-list a changed folder: new paths for its files, or removals if it left the root."""
        descendants = walk(
            self._api,
            folder_id=meta["id"],
            path=path or "",
            drive_id=meta.get("driveId"),
            trashed=False if path is not None else None,
            folders_per_query=self._folders_per_query,
        )
        for child, child_path in descendants:
            entry = self._builder.build(child, child_path) if path is not None else None
            if entry is None:
                self._remove(child["id"])
            else:
                self._upsert(entry)

    def _path_of(self, meta: dict[str, Any]) -> str | None:
        """The path under the root, or None when the item is trashed or outside the root."""
        if meta.get("trashed"):
            return None
        names = [meta["name"]]
        parent_id = (meta.get("parents") or [None])[0]
        seen: set[str] = set()
        while parent_id != self._root_id:
            if parent_id is None or parent_id in seen:
                return None
            seen.add(parent_id)
            folder = self._folder(parent_id)
            if folder is None or folder.trashed:
                return None
            names.append(folder.name)
            parent_id = folder.parent_id
        return "/".join(path_component(name) for name in reversed(names))

    def _folder(self, folder_id: str) -> _Folder | None:
        if folder_id not in self._folders:
            try:
                self._folders[folder_id] = _Folder.of(self._api.get(folder_id))
            except SourceNotFoundError:
                # Someone else's folder, or gone: either way not under our root.
                self._folders[folder_id] = None
        return self._folders[folder_id]

    def _upsert(self, entry: SourceEntry) -> None:
        self._removed.pop(entry.external_id, None)
        self._upserted[entry.external_id] = entry

    def _remove(self, file_id: str) -> None:
        self._upserted.pop(file_id, None)
        self._removed[file_id] = None

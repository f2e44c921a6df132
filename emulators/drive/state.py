"""The Drive emulator's in-memory world: a file tree, its change log, call counts and faults.

Every mutation records a change the way Drive's change log does: one entry per file, moved to
the end of the log each time the file changes, so a page token is just a log position.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import secrets
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from apps.connectors.drive import mimes
from emulators.drive.errors import ApiError, Fault, FaultKind, not_found
from emulators.drive.permissions import DrivePermissions
from emulators.drive.query import ROOT_ID, Predicate


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class OAuthGrant:
    """What an authorization code stands for until it is exchanged (once) at the token endpoint."""

    challenge: str
    redirect_uri: str
    scope: str
    client_id: str = ""
    nonce: str = ""


@dataclass
class GoogleAccount:
    """Who clicks Allow on the emulated consent page: the identity its ID tokens carry."""

    sub: str = "emu-google-user-1"
    email: str = "bob@example.com"
    name: str = "Bob Example"


@dataclass(frozen=True)
class MediaServed:
    file_id: str
    range: str  # the request's Range header, "" for the whole file
    length: int  # bytes sent


@dataclass
class DriveItem:
    id: str
    name: str
    mime_type: str
    parents: list[str]
    drive_id: str | None = None
    content: bytes = b""
    # Google-native files have no content, only renderings keyed by export mime type.
    exports: dict[str, bytes] = field(default_factory=dict)
    shortcut_target_id: str | None = None
    trashed: bool = False
    explicitly_trashed: bool = False
    version: int = 1
    created_time: str = field(default_factory=_now)
    modified_time: str = field(default_factory=_now)
    change_seq: int = 0

    @property
    def is_folder(self) -> bool:
        return self.mime_type == mimes.FOLDER


class DriveState:
    """Thread-safe: the HTTP handler threads and the test thread share one instance.

    ``change_retention``: how many log positions a page token may lag behind before
    changes.list answers 410 (None: tokens never expire).
    """

    MY_DRIVE_ID = ROOT_ID

    def __init__(self, *, change_retention: int | None = None) -> None:
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._next_seq = 1
        self._items: dict[str, DriveItem] = {}
        # Permanently deleted ids -> (log position, shared drive id), reported as removals.
        self._tombstones: dict[str, tuple[int, str | None]] = {}
        self._faults: list[Fault] = []
        self.change_retention = change_retention
        self.calls: Counter[str] = Counter()
        # Every download (alt=media) served: what a test checks to see that only a range was fetched.
        self.media_served: list[MediaServed] = []
        self.revoked_refresh_tokens: set[str] = set()
        self._auth_codes: dict[str, OAuthGrant] = {}
        self.account = GoogleAccount()
        self.permissions = DrivePermissions()
        # Claims to overwrite in the next ID tokens (tests forge a wrong audience, an expiry, ...).
        self.id_token_overrides: dict[str, object] = {}
        self._items[self.MY_DRIVE_ID] = DriveItem(
            id=self.MY_DRIVE_ID,
            name="My Drive",
            mime_type=mimes.FOLDER,
            parents=[],
        )

    # --- building and changing the tree (tests and seeding call these) ---

    def add_folder(self, name: str, *, parent_id: str = MY_DRIVE_ID) -> str:
        return self._create(name=name, mime_type=mimes.FOLDER, parent_id=parent_id)

    def add_file(self, name: str, content: bytes, *, parent_id: str, mime_type: str = "text/plain") -> str:
        return self._create(name=name, mime_type=mime_type, parent_id=parent_id, content=content)

    def add_google_file(
        self,
        name: str,
        *,
        parent_id: str,
        mime_type: str = mimes.DOCUMENT,
        exports: dict[str, bytes],
    ) -> str:
        """A Docs/Sheets/Slides file; ``exports`` maps each supported export type to its bytes."""
        return self._create(name=name, mime_type=mime_type, parent_id=parent_id, exports=dict(exports))

    def add_shortcut(self, name: str, *, parent_id: str, target_id: str) -> str:
        return self._create(name=name, mime_type=mimes.SHORTCUT, parent_id=parent_id, target_id=target_id)

    def add_shared_drive(self, name: str) -> str:
        """A shared drive: its id is also the id of its root folder, as in Drive."""
        with self._lock:
            drive_id = f"0AShared{next(self._ids):05d}"
            self._items[drive_id] = DriveItem(
                id=drive_id,
                name=name,
                mime_type=mimes.FOLDER,
                parents=[],
                drive_id=drive_id,
            )
            return drive_id

    def edit(
        self,
        file_id: str,
        content: bytes | None = None,
        *,
        exports: dict[str, bytes] | None = None,
    ) -> None:
        with self._lock:
            item = self._get(file_id)
            if content is not None:
                item.content = content
            if exports is not None:
                item.exports = dict(exports)
            self._record(item, modified=True)

    def rename(self, file_id: str, name: str) -> None:
        with self._lock:
            item = self._get(file_id)
            item.name = name
            self._record(item, modified=True)

    def move(self, file_id: str, new_parent_id: str) -> None:
        with self._lock:
            item = self._get(file_id)
            item.parents = [self._folder(new_parent_id).id]
            self._record(item)

    def trash(self, file_id: str) -> None:
        """Trash a file, or a folder and everything under it (only the folder explicitly)."""
        with self._lock:
            root = self._get(file_id)
            root.explicitly_trashed = True
            for item in self._subtree(root):
                if not item.trashed:
                    item.trashed = True
                    self._record(item)

    def restore(self, file_id: str) -> None:
        with self._lock:
            root = self._get(file_id)
            root.explicitly_trashed = False
            for item in self._subtree(root):
                if item.trashed and (item is root or not item.explicitly_trashed):
                    item.trashed = False
                    self._record(item)

    def delete(self, file_id: str) -> None:
        """Delete forever, with everything under it."""
        with self._lock:
            for item in list(self._subtree(self._get(file_id))):
                del self._items[item.id]
                self._tombstones[item.id] = (self._take_seq(), item.drive_id)

    def inject(
        self,
        kind: FaultKind,
        *,
        endpoint: str | None = None,
        file_id: str | None = None,
        times: int = 1,
        retry_after: float | None = None,
    ) -> None:
        with self._lock:
            self._faults.append(
                Fault(kind=kind, endpoint=endpoint, file_id=file_id, times=times, retry_after=retry_after),
            )

    def reset_calls(self) -> None:
        with self._lock:
            self.calls.clear()
            self.media_served.clear()

    # --- the OAuth web flow ---

    def issue_auth_code(self, grant: OAuthGrant) -> str:
        with self._lock:
            code = f"emu-code-{secrets.token_urlsafe(12)}"
            self._auth_codes[code] = grant
            return code

    def redeem_auth_code(self, code: str) -> OAuthGrant | None:
        """The code's grant, once: a second exchange of the same code fails as at Google."""
        with self._lock:
            return self._auth_codes.pop(code, None)

    # --- what the HTTP layer uses ---

    def begin_call(self, endpoint: str, file_ids: set[str]) -> None:
        """Count the call, then fail it if a queued fault matches."""
        with self._lock:
            self.calls[endpoint] += 1
            for fault in self._faults:
                if fault.matches(endpoint, file_ids):
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    raise fault.error()

    def record_media(self, file_id: str, range_header: str, length: int) -> None:
        with self._lock:
            self.media_served.append(MediaServed(file_id=file_id, range=range_header, length=length))

    def item(self, file_id: str, *, all_drives: bool = False) -> DriveItem:
        """Resolve ``root`` like Drive; shared drive items need ``supportsAllDrives``."""
        with self._lock:
            item = self._items.get(self.MY_DRIVE_ID if file_id == "root" else file_id)
            if item is None or (item.drive_id and not all_drives):
                raise not_found(file_id)
            return item

    def search(self, predicate: Predicate, *, all_drives: bool, drive_id: str | None) -> list[dict[str, Any]]:
        """Resources of the items matching ``q``, in creation order (Drive's order is unspecified)."""
        with self._lock:
            return [
                self._resource(item)
                for item in self._items.values()
                if item.id != self.MY_DRIVE_ID
                and (all_drives or not item.drive_id)
                and drive_id in (None, item.drive_id)
                and predicate(item)
            ]

    def shared_drives(self) -> list[dict[str, str]]:
        """The shared drives, in creation order (drives.list)."""
        with self._lock:
            return [
                {"kind": "drive#drive", "id": item.id, "name": item.name}
                for item in self._items.values()
                if item.drive_id == item.id
            ]

    def create(self, *, name: str, mime_type: str, parent_id: str) -> DriveItem:
        with self._lock:
            return self._items[self._create(name=name, mime_type=mime_type, parent_id=parent_id)]

    def update(
        self,
        file_id: str,
        *,
        name: str | None,
        add_parents: list[str],
        remove_parents: list[str],
    ) -> DriveItem:
        with self._lock:
            item = self.item(file_id, all_drives=True)
            parents = [parent for parent in item.parents if parent not in remove_parents]
            for parent_id in add_parents:
                if parent_id not in parents:
                    parents.append(self._folder(parent_id).id)
            if len(parents) > 1:
                # Drive stopped allowing multiple parents in 2020.
                raise ApiError(403, "cannotAddParent", "Increasing the number of parents is not allowed.")
            item.parents = parents
            if name is not None:
                item.name = name
            self._record(item, modified=name is not None)
            return item

    def resource(self, item: DriveItem) -> dict[str, Any]:
        """The full Drive v3 ``File`` resource; callers apply the fields mask."""
        with self._lock:
            return self._resource(item)

    def _resource(self, item: DriveItem) -> dict[str, Any]:
        resource: dict[str, Any] = {
            "kind": "drive#file",
            "id": item.id,
            "name": item.name,
            "mimeType": item.mime_type,
            "parents": list(item.parents),
            "version": str(item.version),
            "createdTime": item.created_time,
            "modifiedTime": item.modified_time,
            "trashed": item.trashed,
            "explicitlyTrashed": item.explicitly_trashed,
            "webViewLink": web_view_link(item.id, item.mime_type),
        }
        if not mimes.is_google_native(item.mime_type):
            resource["md5Checksum"] = hashlib.md5(item.content, usedforsecurity=False).hexdigest()
            resource["size"] = str(len(item.content))
        if item.drive_id:
            resource["driveId"] = item.drive_id
        if item.shortcut_target_id:
            target = self._items.get(item.shortcut_target_id)
            resource["shortcutDetails"] = {"targetId": item.shortcut_target_id}
            if target is not None:
                resource["shortcutDetails"]["targetMimeType"] = target.mime_type
        return resource

    def start_page_token(self) -> str:
        with self._lock:
            return str(self._next_seq)

    def changes(
        self,
        token: str,
        *,
        page_size: int,
        drive_id: str | None,
        all_drives: bool,
    ) -> tuple[list[dict[str, Any]], str | None, str | None]:
        """One page of the change log: (changes, nextPageToken, newStartPageToken)."""
        with self._lock:
            start = self._check_token(token)
            entries: list[tuple[int, str, DriveItem | None, str | None]] = [
                (item.change_seq, item.id, item, item.drive_id)
                for item in self._items.values()
                if item.change_seq >= start
            ]
            entries += [
                (seq, file_id, None, item_drive)
                for file_id, (seq, item_drive) in self._tombstones.items()
                if seq >= start
            ]
            if drive_id is not None:
                entries = [entry for entry in entries if entry[3] == drive_id]
            elif not all_drives:
                entries = [entry for entry in entries if entry[3] is None]
            entries.sort(key=lambda entry: entry[0])
            page = entries[:page_size]
            changes = [self._change(seq, file_id, item) for seq, file_id, item, _ in page]
            if len(entries) > page_size:
                return changes, str(page[-1][0] + 1), None
            return changes, None, str(self._next_seq)

    # --- internals ---

    def _change(self, seq: int, file_id: str, item: DriveItem | None) -> dict[str, Any]:
        change: dict[str, Any] = {
            "kind": "drive#change",
            "changeType": "file",
            "time": item.modified_time if item else _now(),
            "fileId": file_id,
            "removed": item is None,
        }
        if item is not None:
            change["file"] = self._resource(item)
            if item.drive_id:
                change["driveId"] = item.drive_id
        return change

    def _check_token(self, token: str) -> int:
        if not token.isdigit() or not 1 <= int(token) <= self._next_seq:
            raise ApiError(400, "invalidParameter", f"Invalid Value: pageToken {token!r}")
        start = int(token)
        if self.change_retention is not None and start < self._next_seq - self.change_retention:
            raise Fault(FaultKind.PAGE_TOKEN_EXPIRED).error()
        return start

    def _create(
        self,
        *,
        name: str,
        mime_type: str,
        parent_id: str,
        content: bytes = b"",
        exports: dict[str, bytes] | None = None,
        target_id: str | None = None,
    ) -> str:
        with self._lock:
            parent = self._folder(parent_id)
            if target_id is not None:
                self._get(target_id)
            item = DriveItem(
                id=f"emu{next(self._ids):06d}",
                name=name,
                mime_type=mime_type,
                parents=[parent.id],
                drive_id=parent.drive_id,
                content=content,
                exports=exports or {},
                shortcut_target_id=target_id,
                version=0,
            )
            self._items[item.id] = item
            self._record(item)
            return item.id

    def _get(self, file_id: str) -> DriveItem:
        return self.item(file_id, all_drives=True)

    def _folder(self, folder_id: str) -> DriveItem:
        folder = self._get(folder_id)
        if not folder.is_folder:
            raise ApiError(400, "invalidParent", f"The parent {folder_id} is not a folder.")
        return folder

    def _subtree(self, root: DriveItem) -> Iterator[DriveItem]:
        yield root
        if root.is_folder:
            for child in [item for item in self._items.values() if root.id in item.parents]:
                yield from self._subtree(child)

    def _take_seq(self) -> int:
        seq, self._next_seq = self._next_seq, self._next_seq + 1
        return seq

    def _record(self, item: DriveItem, *, modified: bool = False) -> None:
        item.version += 1
        item.change_seq = self._take_seq()
        if modified:
            item.modified_time = _now()


# Where Drive's web UI shows an item, in the shape Drive's webViewLink has (the emulator serves no
# such page: the link is for the product to show, never fetched).
_EDITORS = {mimes.DOCUMENT: "document", mimes.SPREADSHEET: "spreadsheets", mimes.PRESENTATION: "presentation"}


def web_view_link(file_id: str, mime_type: str) -> str:
    if mime_type == mimes.FOLDER:
        return f"https://drive.google.com/drive/folders/{file_id}"
    if mime_type in _EDITORS:
        return f"https://docs.google.com/{_EDITORS[mime_type]}/d/{file_id}/edit?usp=drivesdk"
    return f"https://drive.google.com/file/d/{file_id}/view?usp=drivesdk"

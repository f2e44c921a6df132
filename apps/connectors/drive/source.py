"""The Google Drive source: one Drive folder, its subfolders, and its change log."""

from __future__ import annotations

import dataclasses
import functools
import io
import mimetypes
import tempfile
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from django.utils.translation import gettext_noop

from apps.connectors.drive import mimes
from apps.connectors.drive.api import DriveApi
from apps.connectors.drive.changes import ChangeReader
from apps.connectors.drive.client import DriveRequestError, RetryPolicy
from apps.connectors.drive.entries import SHORTCUT_TARGET, WEB_VIEW_LINK, EntryBuilder, walk
from apps.library.sources import (
    ChangeSet,
    FetchedOriginal,
    OriginalContent,
    SourceEntry,
    SourceError,
    SourceNotFoundError,
    SourceProblem,
    numbered_names,
)

# An export for a person is spooled to disk past this size, so a large one never sits in memory.
_SPOOL_BYTES = 8 << 20


class DriveSource:
    """``Source`` for a Drive folder, plus change reading for cheap syncs.

    Sync: take ``start_cursor()`` *before* a full ``list_entries()`` (so nothing changed during
    the listing is missed), store it, and later call ``changes_since(cursor)``; on
    ``CursorExpiredError`` fall back to a full listing diff.
    """

    def __init__(
        self,
        service: Any,
        folder_id: str,
        *,
        retry: RetryPolicy | None = None,
        page_size: int = 1000,
        folders_per_query: int = 30,
    ) -> None:
        self.folder_id = folder_id
        self._api = DriveApi(service, retry=retry or RetryPolicy(), page_size=page_size)
        self._folders_per_query = folders_per_query
        self._problems: list[SourceProblem] = []

    def list_entries(self) -> Iterator[SourceEntry]:
        self._problems = []
        root = self._root()
        builder = EntryBuilder(self._api, self._problems)
        for meta, path in walk(
            self._api,
            folder_id=self.folder_id,
            path="",
            drive_id=root.get("driveId"),
            folders_per_query=self._folders_per_query,
        ):
            entry = builder.build(meta, path)
            if entry is not None:
                yield entry

    def problems(self) -> list[SourceProblem]:
        """Problems met by the last ``list_entries`` or ``changes_since`` run."""
        return list(self._problems)

    def read_bytes(self, entry: SourceEntry) -> tuple[bytes, str]:
        file_id = entry.extra.get(SHORTCUT_TARGET, entry.external_id)
        formats = mimes.EXPORT_FORMATS.get(entry.mime_type)
        if formats is None:
            return self._api.download(file_id), entry.mime_type
        for mime_type in formats[:-1]:
            try:
                return self._api.export(file_id, mime_type), mime_type
            except DriveRequestError as error:
                if error.status != 400:  # 400: this conversion is not offered, try the next
                    raise
        return self._api.export(file_id, formats[-1]), formats[-1]

    def open_original(self, entry: SourceEntry) -> OriginalContent | FetchedOriginal:
        """A file's bytes left in Drive, fetched as they are sent (a range as Drive's own range);
        a Docs Editors file exported (Office format first) into a spool: an export has no size
        until it is made, and Drive serves no ranges of one."""
        file_id = entry.extra.get(SHORTCUT_TARGET, entry.external_id)
        formats = mimes.DOWNLOAD_FORMATS.get(entry.mime_type)
        if formats is None:
            # Read now, not from the row: the size must be the bytes Drive will send.
            meta = self._api.get(file_id)
            return FetchedOriginal(
                fetch=functools.partial(self._api.media_pieces, file_id),
                size=int(meta.get("size") or 0),
                mime_type=entry.mime_type,
                name=entry.name,
                link=meta.get("webViewLink") or entry.extra.get(WEB_VIEW_LINK, ""),
            )
        sink = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 (the caller closes it)
        try:
            mime_type = self._export(file_id, sink, formats)
        except BaseException:
            sink.close()
            raise
        size = sink.tell()
        sink.seek(0)
        name = entry.name
        extension = mimetypes.guess_extension(mime_type) or ""
        if not name.endswith(extension):
            name += extension  # "Budget" exported as xlsx is saved as "Budget.xlsx"
        return OriginalContent(stream=sink, size=size, mime_type=mime_type, name=name)  # type: ignore[arg-type]

    def _export(self, file_id: str, sink: tempfile.SpooledTemporaryFile[bytes], formats: tuple[str, ...]) -> str:
        """Exports ``file_id`` in the first of ``formats`` Drive offers; returns that type."""
        for mime_type in formats[:-1]:
            try:
                self._api.export_to(file_id, sink, mime_type=mime_type)
                return mime_type
            except DriveRequestError as error:
                if error.status != 400:  # 400: this conversion is not offered, try the next
                    raise
                sink.seek(0)
                sink.truncate()
        self._api.export_to(file_id, sink, mime_type=formats[-1])
        return formats[-1]

    def move(self, entry: SourceEntry, new_path: str) -> SourceEntry:
        """Move and/or rename within the folder, creating missing subfolders like ``mkdir -p``."""
        *folder_names, name = _split_path(new_path)
        drive_id = self._root().get("driveId")
        parent_id = self._ensure_folders(folder_names, drive_id=drive_id)
        namesakes = self._api.children([parent_id], drive_id=drive_id, name=name)
        if any(other["id"] != entry.external_id for other in namesakes):
            raise SourceError(f"Cannot move {entry.path}: {new_path} already exists.")
        current = self._api.get(entry.external_id)
        parents = current.get("parents", [])
        new_name = name if name != current["name"] else None
        new_parent = parent_id if parent_id not in parents else None
        updated = current
        if new_name is not None or new_parent is not None:
            updated = self._api.update(
                entry.external_id,
                name=new_name,
                add_parent=new_parent,
                remove_parents=parents,
            )
        if entry.extra.get(SHORTCUT_TARGET):
            return dataclasses.replace(entry, path=new_path, name=updated["name"])
        moved = EntryBuilder(self._api, []).build(updated, new_path)
        if moved is None:
            raise SourceError(f"{entry.path} can no longer be indexed after the move.")
        return moved

    def write_file(self, directory: str, name: str, content: BinaryIO, mime_type: str) -> SourceEntry:
        """Uploads into ``directory`` (created like ``mkdir -p``) under the first free name.

        Drive itself allows two files of one name in a folder; the index does not, so a taken
        name gets a number. Two uploads of one name at the same instant could still both pass.
        """
        _split_path(name)
        folder_names = _split_path(directory.rstrip("/"))
        drive_id = self._root().get("driveId")
        parent_id = self._ensure_folders(folder_names, drive_id=drive_id)
        free = next(
            (
                candidate
                for candidate in numbered_names(name)
                if next(self._api.children([parent_id], drive_id=drive_id, name=candidate), None) is None
            ),
            None,
        )
        if free is None:
            raise SourceError(f"{directory} has no free name for {name}.")
        created = self._api.upload(free, content, mime_type=mime_type, parent_id=parent_id)
        entry = EntryBuilder(self._api, []).build(created, f"{'/'.join(folder_names)}/{free}")
        if entry is None:
            raise SourceError(f"{name} was uploaded but cannot be indexed.")
        return entry

    def overwrite(self, path: str, data: bytes, *, mime_type: str) -> SourceEntry:
        """New content for the file at `path`, or a new file there (folders made like ``mkdir -p``)."""
        *folder_names, name = _split_path(path)
        drive_id = self._root().get("driveId")
        parent_id = self._ensure_folders(folder_names, drive_id=drive_id)
        existing = next(self._api.children([parent_id], drive_id=drive_id, name=name), None)
        if existing is not None and existing["mimeType"] in mimes.EXPORT_FORMATS:
            raise SourceError(f"{path} is a Google Docs Editors file; change it in Drive.")
        written = self._api.upload(
            name,
            io.BytesIO(data),
            mime_type=mime_type,
            parent_id=parent_id,
            file_id=existing["id"] if existing is not None else None,
        )
        entry = EntryBuilder(self._api, []).build(written, path)
        if entry is None:
            raise SourceError(f"{path} was written but cannot be indexed.")
        return entry

    def readers(self) -> Callable[[str], bool]:
        """Who may open the folder in Drive, listed once: a test of an email. Shared with the
        account (here or on a folder above), with anyone, or with its whole domain. A group share
        cannot be resolved without the Directory API, so it does not count."""
        users, domains, anyone = set(), set(), False
        for permission in self._api.permissions(self.folder_id):
            kind = permission.get("type")
            anyone = anyone or kind == "anyone"
            if kind == "user":
                users.add(str(permission.get("emailAddress", "")).lower())
            elif kind == "domain":
                domains.add(str(permission.get("domain", "")).lower())

        def allows(email: str) -> bool:
            email = email.strip().lower()
            return anyone or email in users or (bool(email) and email.rpartition("@")[2] in domains)

        return allows

    def start_cursor(self) -> str:
        return self._api.start_page_token()

    def changes_since(self, cursor: str) -> ChangeSet:
        """Changes under the folder since ``cursor``; raises ``CursorExpiredError`` when it is too old.

        ``removed_ids`` may name files this folder never held: the change log cannot tell a file
        that left the folder from one that was never in it, so ignore ids you do not know.
        """
        self._problems = []
        reader = ChangeReader(
            self._api,
            EntryBuilder(self._api, self._problems),
            root_id=self.folder_id,
            folders_per_query=self._folders_per_query,
        )
        return reader.read(cursor)

    def _ensure_folders(self, names: list[str], *, drive_id: str | None) -> str:
        parent_id = self.folder_id
        for name in names:
            folders = self._api.children([parent_id], drive_id=drive_id, name=name, folders_only=True)
            existing = next(folders, None)
            parent_id = existing["id"] if existing else self._api.create_folder(name, parent_id=parent_id)
        return parent_id

    def _root(self) -> dict[str, Any]:
        root = self._api.get(self.folder_id, not_found="folder not found")
        if root["mimeType"] != mimes.FOLDER:
            raise SourceError(gettext_noop("The connected Drive item is not a folder."))
        if root.get("trashed"):
            raise SourceNotFoundError(gettext_noop("folder was moved to the trash"))
        return root


def _split_path(path: str) -> list[str]:
    parts = path.split("/")
    if path.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise SourceError(f"Invalid path {path!r}: expected a relative path like inbox/file.pdf.")
    return parts

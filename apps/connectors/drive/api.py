"""The Drive calls the source makes, each one request through ``execute`` (retries, errors)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import SimpleNamespace
from typing import IO, Any

from django.utils.translation import gettext_noop
from googleapiclient.http import MediaIoBaseDownload, MediaIoBaseUpload

from apps.connectors.drive import mimes
from apps.connectors.drive.client import RetryPolicy, execute
from apps.library.sources import SourceError

# Drive returns only id/name/mimeType unless asked; these are what entries and paths need.
FILE_FIELDS = (
    "id,name,mimeType,parents,md5Checksum,version,modifiedTime,size,trashed,driveId,webViewLink,"
    "shortcutDetails(targetId,targetMimeType)"
)
_CHANGE_FIELDS = f"nextPageToken,newStartPageToken,changes(changeType,fileId,removed,file({FILE_FIELDS}))"

# Exports for a person (the content endpoint) arrive in pieces of this size, each one request.
_DOWNLOAD_CHUNK_BYTES = 8 << 20
# A file sent on to a person is fetched in ranged pieces of at most this size, each sent as it
# arrives: a download holds one piece in memory, and its first byte waits for one piece, not the file.
STREAM_PIECE_BYTES = 4 << 20

# Shared drive items are invisible unless both flags are set on every call.
_ALL_DRIVES = {"supportsAllDrives": True}
_LIST_ALL_DRIVES = {"supportsAllDrives": True, "includeItemsFromAllDrives": True}


def quote(value: str) -> str:
    """A string literal for Drive's ``q`` language."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


class DriveApi:
    def __init__(self, service: Any, *, retry: RetryPolicy, page_size: int) -> None:
        self._service = service
        self._files = service.files()
        self._changes = service.changes()
        self._retry = retry
        self._page_size = page_size

    def get(self, file_id: str, *, not_found: str = gettext_noop("file not found")) -> dict[str, Any]:
        request = self._files.get(fileId=file_id, fields=FILE_FIELDS, **_ALL_DRIVES)
        result: dict[str, Any] = execute(request, retry=self._retry, not_found=not_found)
        return result

    def children(
        self,
        parent_ids: Sequence[str],
        *,
        drive_id: str | None,
        trashed: bool | None = False,
        name: str | None = None,
        folders_only: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """Children of any of ``parent_ids`` (one query for many folders), all pages.

        ``trashed=None`` includes trashed children too.
        """
        terms = [" or ".join(f"{quote(parent_id)} in parents" for parent_id in parent_ids)]
        if trashed is not None:
            terms.append(f"trashed = {str(trashed).lower()}")
        if name is not None:
            terms.append(f"name = {quote(name)}")
        if folders_only:
            terms.append(f"mimeType = {quote(mimes.FOLDER)}")
        scope = {"corpora": "drive", "driveId": drive_id} if drive_id else {}
        page_token: str | None = None
        while True:
            request = self._files.list(
                q=" and ".join(f"({term})" for term in terms),
                fields=f"nextPageToken,files({FILE_FIELDS})",
                pageSize=self._page_size,
                pageToken=page_token,
                **scope,
                **_LIST_ALL_DRIVES,
            )
            page = execute(request, retry=self._retry, not_found="folder not found")
            yield from page.get("files", [])
            page_token = page.get("nextPageToken")
            if not page_token:
                return

    def download(self, file_id: str) -> bytes:
        content: bytes = execute(self._files.get_media(fileId=file_id, **_ALL_DRIVES), retry=self._retry)
        return content

    def export(self, file_id: str, mime_type: str) -> bytes:
        request = self._files.export_media(fileId=file_id, mimeType=mime_type)
        content: bytes = execute(request, retry=self._retry)
        return content

    def media_pieces(self, file_id: str, *, start: int, end: int) -> Iterator[bytes]:
        """Bytes [start, end) of the file, each piece one `Range` request (retried alone)."""
        for offset in range(start, end, STREAM_PIECE_BYTES):
            last = min(offset + STREAM_PIECE_BYTES, end) - 1
            request = self._files.get_media(fileId=file_id, **_ALL_DRIVES)
            request.headers["Range"] = f"bytes={offset}-{last}"
            piece: bytes = execute(request, retry=self._retry)
            if len(piece) != last + 1 - offset:
                # It shrank since its size was read: stop rather than send less than Content-Length said.
                raise SourceError("The file changed in Drive while it was being sent; open it again.")
            yield piece

    def export_to(self, file_id: str, sink: IO[bytes], *, mime_type: str) -> None:
        """The file's export written into ``sink`` piece by piece, never whole in memory."""
        request = self._files.export_media(fileId=file_id, mimeType=mime_type)
        downloader = MediaIoBaseDownload(sink, request, chunksize=_DOWNLOAD_CHUNK_BYTES)
        # Each piece goes through execute (retries, errors); a retried piece resumes at its offset.
        piece = SimpleNamespace(execute=downloader.next_chunk, methodId="files.download")
        done = False
        while not done:
            _, done = execute(piece, retry=self._retry)

    def update(
        self,
        file_id: str,
        *,
        name: str | None,
        add_parent: str | None,
        remove_parents: Sequence[str],
    ) -> dict[str, Any]:
        arguments: dict[str, Any] = {"fileId": file_id, "fields": FILE_FIELDS, **_ALL_DRIVES}
        if name is not None:
            arguments["body"] = {"name": name}
        if add_parent is not None:
            arguments["addParents"] = add_parent
            arguments["removeParents"] = ",".join(remove_parents)
        result: dict[str, Any] = execute(self._files.update(**arguments), retry=self._retry)
        return result

    def create_folder(self, name: str, *, parent_id: str) -> str:
        body = {"name": name, "mimeType": mimes.FOLDER, "parents": [parent_id]}
        result = execute(self._files.create(body=body, fields="id", **_ALL_DRIVES), retry=self._retry)
        return str(result["id"])

    def upload(
        self, name: str, content: IO[bytes], *, mime_type: str, parent_id: str, file_id: str | None = None
    ) -> dict[str, Any]:
        """A new file from ``content`` under ``parent_id``, or new content for ``file_id``: one
        multipart request (metadata and bytes), retried whole."""
        media = MediaIoBaseUpload(content, mimetype=mime_type, resumable=False)
        if file_id is None:
            body = {"name": name, "parents": [parent_id], "mimeType": mime_type}
            request = self._files.create(body=body, media_body=media, fields=FILE_FIELDS, **_ALL_DRIVES)
        else:
            request = self._files.update(fileId=file_id, body={}, media_body=media, fields=FILE_FIELDS, **_ALL_DRIVES)
        result: dict[str, Any] = execute(request, retry=self._retry)
        return result

    def permissions(self, file_id: str) -> Iterator[dict[str, Any]]:
        """Who may open the file (its own and inherited permissions), all pages."""
        permissions = self._service.permissions()
        page_token: str | None = None
        while True:
            request = permissions.list(
                fileId=file_id,
                fields="nextPageToken,permissions(id,type,role,emailAddress,domain)",
                pageToken=page_token,
                **_ALL_DRIVES,
            )
            page = execute(request, retry=self._retry, not_found="folder not found")
            yield from page.get("permissions", [])
            page_token = page.get("nextPageToken")
            if not page_token:
                return

    def start_page_token(self) -> str:
        result = execute(self._changes.getStartPageToken(**_ALL_DRIVES), retry=self._retry)
        return str(result["startPageToken"])

    def changes(self, page_token: str) -> dict[str, Any]:
        """One page of the user's change log, shared drives included."""
        request = self._changes.list(
            pageToken=page_token,
            pageSize=self._page_size,
            fields=_CHANGE_FIELDS,
            includeRemoved=True,
            **_LIST_ALL_DRIVES,
        )
        result: dict[str, Any] = execute(request, retry=self._retry)
        return result

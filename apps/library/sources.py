"""The one public surface for sources: the protocol every folder backend provides, its errors,
and the registries through which connectors plug in.

A source lists entries under its root and opens their content. Everything above this layer
(indexing, sync, organize) talks only to this protocol. Connectors (local directory, Google
Drive) register one source factory and one sync function per source kind from their
``AppConfig.ready()``, so library never imports a connector.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO, Protocol

from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.core.stored_messages import StoredMessageError

if TYPE_CHECKING:
    # Types only: workers import the errors before Django's app registry is ready.
    from apps.library.models import File, Folder
    from apps.library.reconcile import ReconcileResult


class SourceError(StoredMessageError):
    """A source-level failure with a message fit to show a user, raised like a ``ParseError``
    (``SourceError(gettext_noop("%(path)s no longer exists."), path=...)``) when it is stored."""


class SourceAuthError(SourceError):
    """Credentials were revoked or lack permission: the user must reconnect."""


class SourceNotFoundError(SourceError):
    """The folder (or a file) no longer exists at the source."""


class SourceTransientError(SourceError):
    """Rate limit or server error that outlived our retries; try again later."""


@dataclass(frozen=True)
class SourceEntry:
    """One file under a source root.

    ``path`` is relative to the root with forward slashes (``inbox/W2_2024.pdf``).
    ``checksum`` is a content hash or a source version string: anything that changes when the
    content changes, so sync never relies on modified time alone.
    """

    external_id: str
    path: str
    name: str
    mime_type: str
    size: int
    checksum: str
    modified_time: dt.datetime
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceProblem:
    """Something under the root that was not listed, and why (unreadable, escaping symlink)."""

    path: str
    reason: str


@dataclass(frozen=True)
class ChangeSet:
    """Changes since a cursor: entries added or modified, external ids removed, new cursor."""

    upserted: list[SourceEntry]
    removed_ids: list[str]
    cursor: str


class Source(Protocol):
    """A folder backend."""

    def list_entries(self) -> Iterator[SourceEntry]:
        """Every file under the root, recursively."""
        ...

    def problems(self) -> list[SourceProblem]:
        """Problems met by the last ``list_entries`` run."""
        ...

    def read_bytes(self, entry: SourceEntry) -> tuple[bytes, str]:
        """The content to index and its mime type (exports may change the type)."""
        ...

    def open_original(self, entry: SourceEntry) -> OriginalContent | FetchedOriginal:
        """The file's original bytes, streamed (never loaded whole), never from outside the root."""
        ...

    def move(self, entry: SourceEntry, new_path: str) -> SourceEntry:
        """Move/rename a file inside the root; returns the updated entry."""
        ...

    def write_file(self, directory: str, name: str, content: BinaryIO, mime_type: str) -> SourceEntry:
        """A new file ``name`` in ``directory`` (``inbox/``, created if missing) from ``content``.

        Never overwrites: when the name is taken the file gets the first free ``numbered_names``
        name (``W2.pdf`` -> ``W2 (2).pdf``). Returns the new file's entry.
        """
        ...

    def overwrite(self, path: str, data: bytes, *, mime_type: str) -> SourceEntry:
        """Create the file at `path` (inside the root, folders made as needed) or replace its
        content; returns its entry. A reader never sees it half written."""
        ...


@dataclass(frozen=True)
class OriginalContent:
    """A file's original bytes as its source holds them, for a person to open or download.

    ``stream`` is seekable, positioned at 0, and the caller closes it. ``mime_type`` and ``name``
    are the served type and file name: a Google Docs file is served as its export (``.docx``).
    """

    stream: BinaryIO
    size: int
    mime_type: str
    name: str


class Fetch(Protocol):
    def __call__(self, *, start: int, end: int) -> Iterator[bytes]:
        """Bytes [start, end) of the file, in pieces as they arrive from the source."""
        ...


@dataclass(frozen=True)
class FetchedOriginal:
    """A file's original bytes left at a remote source (Drive) and fetched only as they are sent,
    so a byte range costs the source only that range. ``link`` opens the file at its source (""
    when unknown): what a person gets instead of a file too large to send whole.
    """

    fetch: Fetch
    size: int
    mime_type: str
    name: str
    link: str


@dataclass
class SyncOutcome:
    result: ReconcileResult
    mode: str  # "full" (whole listing) or "changes" (from a cursor)
    api_calls: int = 0
    cursor: str | None = None


# How many "name (n)" variants a write tries before it gives up on a crowded directory.
MAX_NUMBERED_NAMES = 1000

# One source factory and one sync function per source kind, filled by the connectors app.
SOURCES: dict[str, Callable[[Folder], Source]] = {}
SYNCERS: dict[str, Callable[[Folder], SyncOutcome]] = {}
# Per source kind: the name of an unsaved folder's root, raising a SourceError when it cannot be read.
ROOT_CHECKS: dict[str, Callable[[Folder], str]] = {}
# Per source kind that has its own permissions: who may open the folder at its source (Drive), read
# once, as a test of an account's email; raising a SourceError when that cannot be asked.
READER_CHECKS: dict[str, Callable[[Folder], Callable[[str], bool]]] = {}


def numbered_names(name: str, *, limit: int = MAX_NUMBERED_NAMES) -> Iterator[str]:
    """``name``, then ``name (2)``, ``name (3)``... with the suffix before the extension."""
    stem, dot, extension = name.rpartition(".")
    if not stem:  # no extension, or a name that is only one (".profile" never gets here: hidden)
        stem, dot, extension = name, "", ""
    yield name
    for number in range(2, limit + 1):
        yield f"{stem} ({number}){dot}{extension}"


def source_for(*, folder: Folder) -> Source:
    try:
        return SOURCES[folder.source](folder)
    except KeyError:
        raise SourceError(
            gettext_noop("No connector is available for %(source)s folders."), source=folder.source
        ) from None


def source_entry_of(file: File) -> SourceEntry:
    """What the file's source needs to read it again (Drive shortcuts: their target, in `extra`)."""
    return SourceEntry(
        external_id=file.external_id,
        path=file.path,
        name=file.name,
        mime_type=file.mime_type,
        size=file.size,
        checksum=file.checksum,
        modified_time=file.modified_time or timezone.now(),
        extra=dict(file.source_extra),
    )

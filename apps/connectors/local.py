"""The local-directory source: a recursive walk under one root, never leaving it.

External ids are the relative paths (``inbox/W2_2024.pdf``), so a rename looks like delete + add
at this layer; reconcile pairs the two by checksum and keeps the chunks.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import mimetypes
import os
import re
import shutil
import socket
import stat
from collections.abc import Iterator, Mapping
from contextlib import suppress
from pathlib import Path, PurePosixPath
from typing import BinaryIO, NamedTuple

from django.conf import settings
from django.utils.translation import gettext_noop

from apps.connectors.beneath import directory_open_beneath, file_open_beneath, hidden_file_create
from apps.core.stored_messages import StoredMessage
from apps.library.exclusions import Exclusion
from apps.library.file_names import file_name_problem
from apps.library.sources import (
    OriginalContent,
    SourceEntry,
    SourceError,
    SourceNotFoundError,
    SourceProblem,
    numbered_names,
)

_BLOCK = 1 << 20
_MARKDOWN_HINT = re.compile(rb"^(#{1,6} \S|```|\* \S|- \[[ x]\] )", re.MULTILINE)


class KnownFile(NamedTuple):
    """What the index already knows about a path: lets a sync skip hashing unchanged files.

    A tuple: a sync makes one per file of the folder, and a frozen dataclass costs twice as much."""

    size: int
    modified_time: dt.datetime
    checksum: str
    mime_type: str = ""


class LocalSource:
    def __init__(
        self, root: str | Path, *, known: Mapping[str, KnownFile] | None = None, exclusion: Exclusion | None = None
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self._known = known or {}
        # The folder's exclude patterns: excluded files are not listed, excluded directories not walked.
        self._exclusion = exclusion
        self._problems: list[SourceProblem] = []

    def list_entries(self) -> Iterator[SourceEntry]:
        self._root_check()
        self._problems = []
        pending: list[tuple[str, ...]] = [()]
        while pending:
            parts = pending.pop()
            try:
                # Each directory is opened beneath the root, no link followed: one swapped for a
                # symlink since its parent was listed is refused, not walked.
                with directory_open_beneath(root=self.root, parts=list(parts)) as descriptor:
                    children = sorted(os.scandir(descriptor), key=lambda child: child.name)
                    # Visited while the descriptor is open: the entries stat through it.
                    entries = [
                        entry
                        for child in children
                        if not child.name.startswith(".")  # .git, .DS_Store, editor swap files: never content
                        and (entry := self._visit(child, parts, pending)) is not None
                    ]
            except SourceError as exc:
                self._problem(PurePosixPath(*parts).as_posix(), exc.message)
                continue
            except OSError as exc:
                self._problem(
                    PurePosixPath(*parts).as_posix(),
                    StoredMessage(gettext_noop("unreadable directory: %(reason)s"), reason=exc.strerror),
                )
                continue
            yield from entries

    def problems(self) -> list[SourceProblem]:
        return list(self._problems)

    def read_bytes(self, entry: SourceEntry) -> tuple[bytes, str]:
        try:
            stream, _ = self._open_file(entry.path)
        except SourceNotFoundError:
            self._root_check()
            raise
        with stream:
            try:
                return stream.read(), entry.mime_type
            except OSError as exc:
                raise SourceError(
                    gettext_noop("%(path)s is unreadable: %(reason)s"), path=entry.path, reason=exc.strerror
                ) from exc

    def open_original(self, entry: SourceEntry) -> OriginalContent:
        stream, info = self._open_file(entry.path)
        return OriginalContent(stream=stream, size=info.st_size, mime_type=entry.mime_type, name=entry.name)

    def move(self, entry: SourceEntry, new_path: str) -> SourceEntry:
        relative = _clean_relative(new_path)
        source = self._inside(entry.path)
        target = self._inside(relative)
        if os.path.lexists(target):
            raise SourceError(f"{relative} already exists.")
        if not source.is_file():
            raise SourceNotFoundError(gettext_noop("%(path)s no longer exists."), path=entry.path)
        # Renamed between the two directories' descriptors, opened beneath the root: a directory
        # swapped for a symlink since the checks above is refused, not moved into.
        source_parts, target_parts = PurePosixPath(_clean_relative(entry.path)).parts, PurePosixPath(relative).parts
        with (
            directory_open_beneath(root=self.root, parts=list(source_parts[:-1])) as source_dir,
            directory_open_beneath(root=self.root, parts=list(target_parts[:-1]), create=True) as target_dir,
        ):
            os.rename(source_parts[-1], target_parts[-1], src_dir_fd=source_dir, dst_dir_fd=target_dir)
        name = PurePosixPath(relative).name
        return SourceEntry(
            external_id=relative,
            path=relative,
            name=name,
            mime_type=entry.mime_type,
            size=entry.size,
            checksum=entry.checksum,
            modified_time=entry.modified_time,
            extra=dict(entry.extra),
        )

    def write_file(self, directory: str, name: str, content: BinaryIO, mime_type: str) -> SourceEntry:
        # The bytes go to a hidden temporary file first (never listed), then os.link gives it its
        # name: link fails on any existing name, a planted symlink included, so nothing is ever
        # overwritten and the name appears only once the whole content is there. Both are made
        # from the directory's descriptor, opened beneath the root (see `beneath`).
        problem = file_name_problem(name)
        if problem:
            raise SourceError(problem)
        relative_dir = _clean_relative(directory)
        self._inside(relative_dir)  # a clear refusal first; the descriptor walk is the guard
        try:
            with directory_open_beneath(
                root=self.root, parts=list(PurePosixPath(relative_dir).parts), create=True
            ) as target_dir:
                descriptor, temporary = hidden_file_create(directory=target_dir, prefix=".upload-")
                try:
                    with os.fdopen(descriptor, "wb") as handle:
                        shutil.copyfileobj(content, handle, _BLOCK)
                    for candidate in numbered_names(name):
                        try:
                            os.link(temporary, candidate, src_dir_fd=target_dir, dst_dir_fd=target_dir)
                        except FileExistsError:
                            continue
                        info = os.stat(candidate, dir_fd=target_dir, follow_symlinks=False)
                        return self._entry(PurePosixPath(relative_dir, candidate).as_posix(), info)
                finally:
                    os.unlink(temporary, dir_fd=target_dir)
        except OSError as exc:
            raise SourceError(f"{name} could not be written in {directory}: {exc.strerror}") from exc
        raise SourceError(f"{directory} has no free name for {name}.")

    def overwrite(self, path: str, data: bytes, *, mime_type: str) -> SourceEntry:
        relative = _clean_relative(path)
        self._inside(relative)
        parts = list(PurePosixPath(relative).parts)
        try:
            with directory_open_beneath(root=self.root, parts=parts[:-1], create=True) as parent:
                with suppress(FileNotFoundError):
                    if not stat.S_ISREG(os.stat(parts[-1], dir_fd=parent, follow_symlinks=False).st_mode):
                        raise SourceError(f"{path} is not a regular file; nothing was written.")
                # A temporary file beside it, then one rename: readers see the old content or the new.
                descriptor, temporary = hidden_file_create(directory=parent, prefix=f".{parts[-1]}.")
                try:
                    with os.fdopen(descriptor, "wb") as handle:
                        handle.write(data)
                    os.replace(temporary, parts[-1], src_dir_fd=parent, dst_dir_fd=parent)
                except BaseException:
                    os.unlink(temporary, dir_fd=parent)
                    raise
                info = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
        except OSError as exc:
            raise SourceError(f"{path} could not be written: {exc.strerror}") from exc
        return self._entry(relative, info)

    def _visit(
        self, child: os.DirEntry[str], parts: tuple[str, ...], pending: list[tuple[str, ...]]
    ) -> SourceEntry | None:
        # A string, not a Path: a sync visits every file of the folder, and pathlib's parsing of
        # each name cost more than its stat (bench/ops/sync_nochange.py).
        relative = "/".join((*parts, child.name))
        try:
            if child.is_symlink():
                target = Path(os.path.realpath(self.root / relative))
                if not target.is_relative_to(self.root):
                    self._problem(
                        relative, StoredMessage(gettext_noop("symbolic link leads outside the folder; not followed"))
                    )
                    return None
                if not target.exists():
                    self._problem(relative, StoredMessage(gettext_noop("broken symbolic link")))
                    return None
                if target.is_dir():
                    # Following it could loop or list the same files twice.
                    self._problem(relative, StoredMessage(gettext_noop("symbolic link to a directory; not followed")))
                    return None
            if child.is_dir(follow_symlinks=False):
                if not self._excluded(relative, directory=True):
                    pending.append((*parts, child.name))
                return None
            if self._excluded(relative, directory=False):
                return None
            info = child.stat()
            if not stat.S_ISREG(info.st_mode):
                # fifos and devices could block a read
                self._problem(relative, StoredMessage(gettext_noop("not a regular file")))
                return None
            return self._entry(relative, info)
        except OSError as exc:
            self._problem(relative, StoredMessage(gettext_noop("unreadable: %(reason)s"), reason=exc.strerror))
            return None
        except SourceError as exc:  # hashing refused it: changed into a symlink or a special file since
            self._problem(relative, exc.message)
            return None

    def _entry(self, relative: str, info: os.stat_result) -> SourceEntry:
        name = relative.rpartition("/")[2]
        modified = dt.datetime.fromtimestamp(info.st_mtime, tz=dt.UTC)
        known = self._known.get(relative)
        if known and known.size == info.st_size and known.modified_time == modified and known.checksum:
            # Unchanged: not read again, and its type stays what the content said when it was
            # (a name alone would turn a sniffed Markdown .txt back into plain text).
            checksum, mime_type = known.checksum, known.mime_type or _mime_type(name, b"")
        elif info.st_size > settings.INDEX_MAX_FILE_BYTES:
            # Too big to index anyway: don't read gigabytes just to skip them.
            checksum, mime_type = f"stat:{info.st_size}:{info.st_mtime_ns}", _mime_type(name, b"")
        else:
            checksum, head = self._sha256(relative)
            mime_type = _mime_type(name, head)
        return SourceEntry(
            external_id=relative,
            path=relative,
            name=name,
            mime_type=mime_type,
            size=info.st_size,
            checksum=checksum,
            modified_time=modified,
        )

    def _root_check(self) -> None:
        """A missing root is the whole folder's problem, not one file's: it was removed, or this
        worker runs on a host that does not hold it (local folders are read where they are)."""
        if not self.root.is_dir():
            raise SourceNotFoundError(
                gettext_noop(
                    "The folder %(root)s no longer exists on worker host %(host)s. A local folder is read only"
                    " by workers that see its directory: run the sync and indexing workers on the host that"
                    " holds it, or mount it at the same path on every worker host."
                ),
                root=self.root,
                host=socket.gethostname(),
            )

    def _excluded(self, relative: str, *, directory: bool) -> bool:
        if self._exclusion is None:
            return False
        if directory:
            return self._exclusion.excludes_directory(relative)
        return self._exclusion.excludes(relative)

    def _open_file(self, relative: str) -> tuple[BinaryIO, os.stat_result]:
        """The file opened for reading, every component beneath the root (see `beneath`). A symlink
        inside the folder to a file inside it is read from its target: resolved and checked first."""
        real = self._real(self.root / _clean_relative(relative), shown=relative)
        descriptor, info = file_open_beneath(root=self.root, relative=real.relative_to(self.root).as_posix())
        return os.fdopen(descriptor, "rb"), info

    def _sha256(self, relative: str) -> tuple[str, bytes]:
        digest = hashlib.sha256()
        head = b""
        stream, _ = self._open_file(relative)
        with stream:
            while block := stream.read(_BLOCK):
                head = head or block[:4096]
                digest.update(block)
        return digest.hexdigest(), head

    def _inside(self, relative: str) -> Path:
        path = self.root / _clean_relative(relative)
        self._real(path, shown=relative)
        return path

    def _real(self, path: Path, *, shown: str) -> Path:
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(self.root):
            raise SourceError(gettext_noop("%(path)s leads outside the folder."), path=shown)
        return real

    def _problem(self, relative: str, reason: str) -> None:
        self._problems.append(SourceProblem(path=relative, reason=reason))


def _clean_relative(path: str) -> str:
    candidate = PurePosixPath(path.replace("\\", "/"))
    if candidate.is_absolute() or not candidate.parts or any(part in {"..", "."} for part in candidate.parts):
        raise SourceError(gettext_noop("%(path)s is not a path inside the folder."), path=repr(path))
    if "\x00" in path:
        raise SourceError("The path contains a NUL byte.")
    return candidate.as_posix()


def _mime_type(name: str, head: bytes) -> str:
    guessed = mimetypes.guess_type(name, strict=False)[0]
    if guessed not in {None, "text/plain", "application/octet-stream"}:
        return str(guessed)
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if not head or b"\x00" in head:
        return guessed or "application/octet-stream"
    return "text/markdown" if _MARKDOWN_HINT.search(head) else "text/plain"

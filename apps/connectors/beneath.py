"""Opening a path beneath a local folder's directory without following a symbolic link on the way.

A path resolved and checked first can still change before it is opened: a directory on it
swapped for a symlink would carry the open outside the folder, and ``O_NOFOLLOW`` guards only
the last component. So each component is opened from its parent's descriptor (an ``openat``
walk), none of them followed. ``openat2(RESOLVE_BENEATH)`` would do the same in one call, but
Python has no binding for it and the walk works on every POSIX kernel.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath

from django.utils.translation import gettext_noop

from apps.library.sources import SourceError, SourceNotFoundError

_DIRECTORY = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
# O_NONBLOCK: opening a fifo put there must not hang the reader (it is refused after fstat).
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def file_open_beneath(*, root: Path, relative: str) -> tuple[int, os.stat_result]:
    """A descriptor of the regular file at `relative` under `root`, and its stat; the caller
    closes it. SourceNotFoundError when it is gone, SourceError for a symlink or special file."""
    parts = _plain_parts(relative)
    with directory_open_beneath(root=root, parts=parts[:-1]) as parent:
        descriptor = _open_component(parent, parts, len(parts) - 1, _FILE)
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        raise SourceError(gettext_noop("%(path)s is not a regular file."), path=relative)
    return descriptor, info


@contextmanager
def directory_open_beneath(*, root: Path, parts: list[str], create: bool = False) -> Iterator[int]:
    """A descriptor of the directory `parts` name under `root`, closed on leaving; with `create`,
    missing directories are made on the way (each from its parent's descriptor as well)."""
    try:
        descriptor = os.open(root, _DIRECTORY)
    except FileNotFoundError:
        raise SourceNotFoundError(gettext_noop("The folder %(root)s no longer exists."), root=root) from None
    except OSError as exc:
        raise SourceError(
            gettext_noop("The folder %(root)s cannot be opened: %(reason)s"), root=root, reason=exc.strerror
        ) from exc
    try:
        for index, name in enumerate(parts):
            if create:
                with suppress(FileExistsError):
                    os.mkdir(name, dir_fd=descriptor)
            child = _open_component(descriptor, parts, index, _DIRECTORY)
            os.close(descriptor)
            descriptor = child
        yield descriptor
    finally:
        os.close(descriptor)


def hidden_file_create(*, directory: int, prefix: str) -> tuple[int, str]:
    """A new file of a random hidden name in the `directory` descriptor, opened for writing, and
    its name; O_EXCL with O_NOFOLLOW so a name planted there (a symlink included) is never written
    through. The caller closes the descriptor and links, renames or unlinks the name."""
    while True:
        name = f"{prefix}{secrets.token_hex(8)}.tmp"
        try:
            return os.open(name, _NEW_FILE, 0o666, dir_fd=directory), name
        except FileExistsError:
            continue


def _open_component(parent: int, parts: list[str], index: int, flags: int) -> int:
    name = parts[index]
    if name in {"", ".", ".."} or "/" in name or "\x00" in name:
        raise SourceError(gettext_noop("%(name)s is not a plain name inside the folder."), name=repr(name))
    shown = "/".join(parts[: index + 1])
    try:
        return os.open(name, flags, dir_fd=parent)
    except FileNotFoundError:
        raise SourceNotFoundError(gettext_noop("%(path)s no longer exists."), path=shown) from None
    except OSError as exc:
        # A symlink opened with O_NOFOLLOW fails with ELOOP, or ENOTDIR when a directory was asked for.
        if exc.errno in {errno.ELOOP, errno.ENOTDIR} and _is_symlink(parent, name):
            raise SourceError(
                gettext_noop("%(path)s is a symbolic link; files are read only beneath the folder."), path=shown
            ) from None
        if exc.errno == errno.ENOTDIR:
            raise SourceNotFoundError(gettext_noop("%(path)s is no longer a directory."), path=shown) from None
        raise SourceError(gettext_noop("%(path)s is unreadable: %(reason)s"), path=shown, reason=exc.strerror) from exc


def _is_symlink(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _plain_parts(relative: str) -> list[str]:
    parts = list(PurePosixPath(relative).parts)
    if not parts or PurePosixPath(relative).is_absolute():
        raise SourceError(gettext_noop("%(path)s is not a path inside the folder."), path=repr(relative))
    return parts

"""Folder paths as users and models write them, checked and put in one form: ``taxes/2024/``.

Every target folder, include/exclude entry and undo destination passes through here before it
reaches a source: a path that could leave the folder root is refused, never repaired.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from apps.core.api import ApplicationError

MAX_PATH_CHARS = 1024
MAX_SEGMENT_CHARS = 255
INBOX = "inbox/"


def folder_path_clean(value: str, *, field: str = "target_folder") -> str:
    """``value`` as a folder path relative to the root, ending in ``/``; ApplicationError (400) if unsafe."""
    if "\x00" in value:
        raise ApplicationError(f"{field} contains a NUL byte.")
    if any(ord(char) < 32 for char in value):
        raise ApplicationError(f"{field} contains control characters.")
    text = value.strip()
    if not text or text == "/":
        raise ApplicationError(f"{field} must name a folder, like taxes/ or work/reports/.")
    if "\\" in text:
        raise ApplicationError(f"{field} must use forward slashes.")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise ApplicationError(f"{field} must be relative to the folder root, not absolute.")
    segments = text.rstrip("/").split("/")
    if any(segment in ("", ".", "..") for segment in segments):
        raise ApplicationError(f"{field} may not contain empty, '.' or '..' segments.")
    if any(segment != segment.strip() for segment in segments):
        raise ApplicationError(f"{field} may not have spaces around a '/'.")
    if any(len(segment) > MAX_SEGMENT_CHARS for segment in segments):
        raise ApplicationError(f"{field} has a folder name longer than {MAX_SEGMENT_CHARS} characters.")
    cleaned = "/".join(segments) + "/"
    if len(cleaned) > MAX_PATH_CHARS:
        raise ApplicationError(f"{field} is longer than {MAX_PATH_CHARS} characters.")
    return cleaned


def parent_folder(path: str) -> str:
    """``inbox/W2.pdf`` -> ``inbox/``; a file at the root -> ``""``."""
    parent = PurePosixPath(path).parent.as_posix()
    return "" if parent == "." else parent + "/"


def is_under(path: str, folder: str) -> bool:
    """Whether ``path`` (a file or folder path) lies in ``folder`` (``taxes/``) or is it."""
    return path == folder or path.startswith(folder)


def in_inbox(path: str) -> bool:
    return path.startswith(INBOX)


def file_path_clean(value: str, *, field: str = "path") -> str:
    """A file path relative to the root (``inbox/W2.pdf``); ApplicationError (400) if unsafe."""
    if value.strip().endswith("/"):
        raise ApplicationError(f"{field} must name a file, not a folder.")
    return folder_path_clean(value, field=field).rstrip("/")

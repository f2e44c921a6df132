"""Folder paths as users and models write them, checked and put in one form: ``taxes/2024/``.

Every target folder, include/exclude entry and undo destination passes through here before it
reaches a source: a path that could leave the folder root is refused, never repaired.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from django.utils.translation import gettext as _

from apps.core.api import ApplicationError

MAX_PATH_CHARS = 1024
MAX_SEGMENT_CHARS = 255
INBOX = "inbox/"


def folder_path_clean(value: str, *, field: str = "target_folder") -> str:
    """``value`` as a folder path relative to the root, ending in ``/``; ApplicationError (400) if unsafe."""
    if "\x00" in value:
        raise ApplicationError(_("%(field)s contains a NUL byte.") % {"field": field})
    if any(ord(char) < 32 for char in value):
        raise ApplicationError(_("%(field)s contains control characters.") % {"field": field})
    text = value.strip()
    if not text or text == "/":
        raise ApplicationError(_("%(field)s must name a folder, like taxes/ or work/reports/.") % {"field": field})
    if "\\" in text:
        raise ApplicationError(_("%(field)s must use forward slashes.") % {"field": field})
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise ApplicationError(_("%(field)s must be relative to the folder root, not absolute.") % {"field": field})
    segments = text.rstrip("/").split("/")
    if any(segment in ("", ".", "..") for segment in segments):
        raise ApplicationError(_("%(field)s may not contain empty, '.' or '..' segments.") % {"field": field})
    if any(segment != segment.strip() for segment in segments):
        raise ApplicationError(_("%(field)s may not have spaces around a '/'.") % {"field": field})
    if any(len(segment) > MAX_SEGMENT_CHARS for segment in segments):
        raise ApplicationError(
            _("%(field)s has a folder name longer than %(limit)s characters.")
            % {"field": field, "limit": MAX_SEGMENT_CHARS}
        )
    cleaned = "/".join(segments) + "/"
    if len(cleaned) > MAX_PATH_CHARS:
        raise ApplicationError(
            _("%(field)s is longer than %(limit)s characters.") % {"field": field, "limit": MAX_PATH_CHARS}
        )
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
        raise ApplicationError(_("%(field)s must name a file, not a folder.") % {"field": field})
    return folder_path_clean(value, field=field).rstrip("/")

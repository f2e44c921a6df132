"""What a file name written into a folder may be: one rule for every writer (uploads, saved notes
and pages, the local source's writes).

A name is a plain name, never a path: not empty, no ``/`` or ``\\``, no leading dot (hidden files
are never indexed; ``.`` and ``..`` are paths), no control characters, at most 255 bytes (what file
systems allow). A name a person sent is refused when it breaks the rule, never repaired, so they
learn it was not kept as sent; text the product turns into a name (a page's title) is repaired.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext

MAX_NAME_BYTES = 255
# Separators and control characters, and what Windows forbids in a name (a folder may be synced there).
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]+")


def file_name_problem(name: str) -> str | None:
    """Why ``name`` is not a plain file name, in words for whoever sent it; None when it is one."""
    if not name:
        return gettext("The file needs a name.")
    if "/" in name or "\\" in name:
        return gettext("%(name)r is not a plain file name: it may not contain / or \\.") % {"name": name}
    if name.startswith("."):
        return gettext("%(name)r starts with a dot: hidden files are never indexed; rename it.") % {"name": name}
    if any(ord(char) < 32 or ord(char) == 127 for char in name):
        return gettext("The file name contains control characters.")
    if len(name.encode()) > MAX_NAME_BYTES:
        return gettext("The file name is longer than %(limit)s bytes.") % {"limit": MAX_NAME_BYTES}
    return None


def file_name_from_text(text: str, *, max_chars: int) -> str:
    """``text`` made fit for a file name: unsafe characters become spaces, runs of spaces one, no
    leading dot, at most ``max_chars``; empty when nothing is left."""
    cleaned = " ".join(_UNSAFE.sub(" ", text).split()).lstrip(".")
    return cleaned[:max_chars].rstrip()

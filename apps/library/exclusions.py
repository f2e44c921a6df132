"""Per-folder exclude patterns, in gitignore syntax (``pathspec``).

An excluded path is never listed as a file of the folder: reconcile drops it from every listing
and change set (a file newly excluded loses its row and chunks on the next sync), and the local
source does not even walk into excluded directories.
"""

from __future__ import annotations

import re
from functools import lru_cache

import pathspec
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

# What every real folder carries that no one wants to search: version control, dependencies,
# caches, editor and OS droppings, and build output that names itself.
DEFAULT_EXCLUDE_PATTERNS = "\n".join(
    [
        ".git/",
        ".hg/",
        ".svn/",
        "node_modules/",
        "bower_components/",
        "__pycache__/",
        "*.pyc",
        ".venv/",
        "venv/",
        ".tox/",
        ".mypy_cache/",
        ".pytest_cache/",
        ".ruff_cache/",
        ".cache/",
        ".idea/",
        ".vscode/",
        "*.min.js",
        "*.min.css",
        "*.map",
        ".DS_Store",
        "Thumbs.db",
        "desktop.ini",
        "*.swp",
        "*~",
        ".~lock.*#",
    ]
)
MAX_PATTERN_LINES = 500
MAX_PATTERN_CHARS = 20_000


class ExcludePatternError(ValueError):
    """A pattern gitignore syntax cannot read; the message names it."""


def exclude_patterns_clean(*, text: str) -> str:
    """The patterns as stored (one per line, trimmed); raises ``ExcludePatternError`` with a reason."""
    if len(text) > MAX_PATTERN_CHARS:
        raise ExcludePatternError(
            _("Too long: at most %(limit)s characters of patterns.") % {"limit": MAX_PATTERN_CHARS}
        )
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    if len(lines) > MAX_PATTERN_LINES:
        raise ExcludePatternError(_("Too many patterns: at most %(limit)s lines.") % {"limit": MAX_PATTERN_LINES})
    for number, line in enumerate(lines, start=1):
        if "\x00" in line:
            raise ExcludePatternError(_("Line %(number)s contains a NUL character.") % {"number": number})
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except (ValueError, re.error) as exc:
            raise ExcludePatternError(
                _("Line %(number)s (%(line)r) is not a valid gitignore pattern: %(reason)s")
                % {"number": number, "line": line, "reason": exc}
            ) from exc
    return "\n".join(lines)


def exclude_patterns_validator(value: str) -> None:
    """The model field's validator, so the admin form refuses what the API refuses."""
    try:
        exclude_patterns_clean(text=value)
    except ExcludePatternError as exc:
        raise ValidationError(str(exc)) from exc


class Exclusion:
    """Answers whether a path relative to the folder root is excluded."""

    def __init__(self, patterns: str) -> None:
        self._spec = pathspec.GitIgnoreSpec.from_lines(patterns.splitlines())
        self._empty = not patterns.strip()

    def excludes(self, path: str) -> bool:
        return not self._empty and self._spec.match_file(path)

    def excludes_directory(self, path: str) -> bool:
        """True when everything under the directory is excluded, so a walk need not enter it."""
        return not self._empty and self._spec.match_file(path.rstrip("/") + "/")


@lru_cache(maxsize=64)
def exclusion_for(patterns: str) -> Exclusion:
    """Compiled once per distinct set of patterns (many folders share the defaults)."""
    return Exclusion(patterns)

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
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")
_ANY_DEPTH = "^(?:.+/)?"


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
        self._any = _any_pattern(self._spec)

    def excludes(self, path: str) -> bool:
        if self._empty:
            return False
        if self._any is not None:
            # pathspec's normalize_file as it is on POSIX, inline: it cost as much as the match.
            return self._any.search(path[1:] if path.startswith("/") else path.removeprefix("./")) is not None
        return self._spec.match_file(path)

    def excludes_directory(self, path: str) -> bool:
        """True when everything under the directory is excluded, so a walk need not enter it."""
        return self.excludes(path.rstrip("/") + "/")


def _any_pattern(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str] | None:
    """Without negations a path is excluded when any pattern matches it: one regex for them all.

    A sync checks every file of the folder (a 100k-file folder: 100k paths against the two dozen
    defaults one by one took seconds). With a ``!`` pattern the last match decides: pathspec's
    own order then, None here.
    """
    active = [pattern for pattern in spec.patterns if pattern.include is not None]
    if not active or not all(pattern.include for pattern in active):
        return None
    regexes = [regex for pattern in active if isinstance(regex := getattr(pattern, "regex", None), re.Pattern)]
    if len(regexes) != len(active) or any(regex.flags != re.UNICODE for regex in regexes):
        return None
    # Each pattern names its directory mark group alike; merged, the names would clash. Most
    # begin "at any depth": that prefix once, else each alternative backtracks over the path.
    bodies = [_NAMED_GROUP.sub("(?:", regex.pattern) for regex in regexes]
    deep = [body.removeprefix(_ANY_DEPTH) for body in bodies if body.startswith(_ANY_DEPTH)]
    rooted = [body for body in bodies if not body.startswith(_ANY_DEPTH)]
    alternatives = [f"{_ANY_DEPTH}(?:{'|'.join(deep)})"] if deep else []
    return re.compile("|".join([*alternatives, *(f"(?:{body})" for body in rooted)]))


@lru_cache(maxsize=64)
def exclusion_for(patterns: str) -> Exclusion:
    """Compiled once per distinct set of patterns (many folders share the defaults)."""
    return Exclusion(patterns)

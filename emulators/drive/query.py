"""The subset of Drive's ``q`` search language and ``fields`` masks that the emulator understands.

``q``: terms ``'<id>' in parents``, ``trashed = true|false``, ``mimeType = '...'``,
``name = '...'`` (``=`` or ``!=``), ``name contains '...'``, combined with ``and``/``or`` and parentheses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from emulators.drive.errors import ApiError, bad_request


class Queryable(Protocol):
    name: str
    mime_type: str
    parents: list[str]
    trashed: bool


Predicate = Callable[[Queryable], bool]
ROOT_ID = "0AMyDriveRoot"  # DriveState.MY_DRIVE_ID (the state imports this module, not the reverse)

_TOKEN = re.compile(r"\s*(?:(?P<string>'(?:[^'\\]|\\.)*')|(?P<op>!=|=|\(|\)|,)|(?P<word>[\w*]+))")


def _tokenize(text: str) -> list[str]:
    tokens, position = [], 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise bad_request(f"Invalid Value: unexpected text at {text[position:]!r}", reason="invalid")
        tokens.append(match.group().strip())
        position = match.end()
    return tokens


def _unquote(token: str) -> str:
    if len(token) < 2 or token[0] != "'":
        raise bad_request(f"Invalid Value: expected a quoted string, got {token!r}", reason="invalid")
    return re.sub(r"\\(.)", r"\1", token[1:-1])


@dataclass
class Query:
    """A parsed ``q``: the predicate, and the parent ids it names (which must exist)."""

    predicate: Predicate
    parent_ids: set[str] = field(default_factory=set)


class _QueryParser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.position = 0
        self.parent_ids: set[str] = set()

    def parse(self) -> Query:
        predicate = self._or()
        if self.position != len(self.tokens):
            raise self._error()
        return Query(predicate=predicate, parent_ids=self.parent_ids)

    def _peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _next(self) -> str:
        token = self._peek()
        if token is None:
            raise bad_request("Invalid Value: the query ends too early", reason="invalid")
        self.position += 1
        return token

    def _error(self) -> ApiError:
        return bad_request(f"Invalid Value: unexpected {self._peek()!r} in query", reason="invalid")

    def _or(self) -> Predicate:
        terms = [self._and()]
        while self._peek() == "or":
            self._next()
            terms.append(self._and())
        return terms[0] if len(terms) == 1 else lambda item: any(term(item) for term in terms)

    def _and(self) -> Predicate:
        terms = [self._term()]
        while self._peek() == "and":
            self._next()
            terms.append(self._term())
        return terms[0] if len(terms) == 1 else lambda item: all(term(item) for term in terms)

    def _term(self) -> Predicate:
        word = self._next()
        if word == "(":
            inner = self._or()
            if self._next() != ")":
                raise self._error()
            return inner
        if word.startswith("'"):
            parent_id = _unquote(word)
            if (self._next(), self._next()) != ("in", "parents"):
                raise self._error()
            self.parent_ids.add(parent_id)
            # "root" is My Drive's alias in queries as in files.get.
            parent = ROOT_ID if parent_id == "root" else parent_id
            return lambda item: parent in item.parents
        operator = self._next()
        if word == "name" and operator == "contains":
            # Drive matches case-insensitively; a plain substring is close enough for tests.
            fragment = _unquote(self._next()).casefold()
            return lambda item: fragment in item.name.casefold()
        if operator not in ("=", "!="):
            raise self._error()
        equal = operator == "="
        value = self._next()
        if word == "trashed" and value in ("true", "false"):
            wanted = value == "true"
            return lambda item: (item.trashed == wanted) == equal
        if word in ("mimeType", "name"):
            text = _unquote(value)
            attribute = "mime_type" if word == "mimeType" else "name"
            return lambda item: (getattr(item, attribute) == text) == equal
        raise bad_request(f"Invalid Value: unsupported query term {word!r}", reason="invalid")


def parse_query(text: str) -> Query:
    if not text.strip():
        return Query(predicate=lambda item: True)
    return _QueryParser(text).parse()


# A fields mask: field name -> sub-mask, or None for the whole value.
Mask = dict[str, "Mask | None"]

KNOWN_FIELDS = frozenset(
    {
        "*", "kind", "id", "name", "mimeType", "parents", "md5Checksum", "version", "modifiedTime",
        "createdTime", "size", "trashed", "explicitlyTrashed", "driveId", "shortcutDetails", "webViewLink",
        "targetId", "targetMimeType", "files", "nextPageToken", "incompleteSearch", "changes",
        "newStartPageToken", "startPageToken", "fileId", "removed", "file", "time", "changeType",
        "drives", "permissions", "type", "role", "emailAddress", "domain",
    }
)  # fmt: skip


def parse_fields(text: str) -> Mask:
    """``nextPageToken,files(id,name)`` -> ``{"nextPageToken": None, "files": {"id": None, ...}}``."""
    tokens = _tokenize(text)
    mask, position = _parse_mask(tokens, 0)
    if position != len(tokens):
        raise bad_request(f"Invalid field selection {text}", reason="invalidParameter")
    return mask


def _parse_mask(tokens: list[str], position: int) -> tuple[Mask, int]:
    mask: Mask = {}
    while position < len(tokens):
        name = tokens[position]
        if name not in KNOWN_FIELDS:
            raise bad_request(f"Invalid field selection {name}", reason="invalidParameter")
        position += 1
        sub: Mask | None = None
        if position < len(tokens) and tokens[position] == "(":
            sub, position = _parse_mask(tokens, position + 1)
            if position >= len(tokens) or tokens[position] != ")":
                raise bad_request(f"Invalid field selection {name}", reason="invalidParameter")
            position += 1
        mask[name] = sub
        if position < len(tokens) and tokens[position] == ",":
            position += 1
        elif position < len(tokens) and tokens[position] == ")":
            break
    return mask, position


def apply_mask(value: Any, mask: Mask | None) -> Any:
    """Keep only the masked fields, recursing into objects and lists of objects."""
    if mask is None or "*" in mask:
        return value
    if isinstance(value, list):
        return [apply_mask(item, mask) for item in value]
    if isinstance(value, dict):
        return {key: apply_mask(value[key], sub) for key, sub in mask.items() if key in value}
    return value

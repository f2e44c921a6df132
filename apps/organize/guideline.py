"""The folder's ``guideline.md``: read from the source root and turned into filing rules.

A rule is a target folder plus the words that send a file there, with the line it came from so
a suggestion can quote it. Two shapes are understood, both as people write them:

- a section whose heading names a folder (``## finance/``): its paragraph describes what goes there;
- a line that names a folder (``- A W-2 or 1099 always goes to `taxes/`.``,
  ``Tax forms (W-2, 1099) go in taxes/{year}/``): a specific rule, stronger than a description.

Lines pointing at ``inbox/`` ("when unsure, leave it in inbox/") are advice, not destinations.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from dataclasses import dataclass

from django.utils import timezone
from django.utils.translation import gettext

from apps.core.api import ConflictError
from apps.library.models import File, Folder, SourceKind
from apps.library.selectors import file_chunk_texts, folder_file_get_by_path
from apps.library.sources import SourceEntry, SourceError, SourceNotFoundError, source_for
from apps.organize.paths import INBOX
from apps.organize.terms import folder_terms, organize_terms

logger = logging.getLogger(__name__)

GUIDELINE_PATH = "guideline.md"
MAX_GUIDELINE_BYTES = 64 * 1024

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<title>.+?)\s*#*\s*$")
_TICKED = re.compile(r"`(?P<ref>[^`\n]+)`")
_BARE_REF = re.compile(r"(?<![\w/`{}.-])(?P<ref>[\w{}-]+(?:/[\w{}-]+)*/)(?![\w/])")
# The folder after one of these words is where the line sends files ("goes to `taxes/`").
_VERB_BEFORE = re.compile(r"\b(go|goes|belong|belongs|move|moved|put|file|filed|keep|kept|store|stored)\b[^`/]{0,40}$")
_BULLET = re.compile(r"^\s*([-*+]|\d+[.)])\s")
_SLUG = re.compile(r"^[\w{}. -]+(?:/[\w{}. -]+)*/?$")


@dataclass(frozen=True)
class GuidelineRule:
    target: str  # "taxes/", possibly with a "{year}" placeholder
    text: str  # what the user wrote: the line, or the heading and its paragraph
    line: int  # 1-based, where it starts
    terms: frozenset[str]
    specific: bool  # a one-line rule rather than a section description


def guideline_parse(text: str, *, known_folders: Collection[str] = ()) -> tuple[GuidelineRule, ...]:
    known = {folder.lower().rstrip("/") for folder in known_folders}
    rules: list[GuidelineRule] = []
    section: tuple[str, int, list[str]] | None = None  # target, line, text

    def close_section() -> None:
        if section is not None:
            target, line, lines = section
            rules.append(_rule(target=target, text="\n".join(lines), line=line, specific=False))

    for number, line, heading in _logical_lines(text):
        if heading:
            close_section()
            title = _HEADING.match(line)
            target = _folder_of(title.group("title").strip("` "), known=known) if title else None
            section = (target, number, [line]) if target and target != INBOX else None
            continue
        target = _line_target(line, known=known)
        if target is not None:
            if target != INBOX:
                rules.append(_rule(target=target, text=line, line=number, specific=True))
        elif section is not None:
            section[2].append(line)
    close_section()
    return tuple(rules)


def _logical_lines(text: str) -> list[tuple[int, str, bool]]:
    """(first line number, text, is a heading): a bullet item or a paragraph, however it wraps."""
    lines: list[tuple[int, str, bool]] = []
    joinable = False
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped:
            joinable = False
        elif _HEADING.match(raw):
            lines.append((number, stripped, True))
            joinable = False
        elif joinable and not _BULLET.match(raw):
            first, joined, _ = lines[-1]
            lines[-1] = (first, f"{joined} {stripped}", False)
        else:
            lines.append((number, stripped, False))
            joinable = True
    return lines


def guideline_read(*, folder: Folder) -> str:
    """``guideline.md`` at the folder root, from the source; the indexed text when the source fails."""
    file = folder_file_get_by_path(folder_id=folder.pk, path=GUIDELINE_PATH)
    try:
        data = _source_bytes(folder=folder, file=file)
    except SourceError as exc:
        logger.info("guideline.md of folder %s unreadable at the source (%s)", folder.pk, exc)
        return _indexed_text(file.pk) if file else ""
    return data[:MAX_GUIDELINE_BYTES].decode("utf-8", errors="replace")


def guideline_line_append(*, folder: Folder, line: str) -> bool:
    """Add `line` at the end of ``guideline.md`` through the folder's source, creating the file
    when there is none; False when the line is there already. Raises ConflictError (with the
    reason, a 409) when the file cannot be read whole or written: it is never overwritten blind."""
    file = folder_file_get_by_path(folder_id=folder.pk, path=GUIDELINE_PATH)
    try:
        data = _source_bytes(folder=folder, file=file)
    except SourceNotFoundError:
        data = b""
    except SourceError as exc:
        raise ConflictError(
            gettext("guideline.md could not be read, so nothing was added: %(reason)s") % {"reason": exc}
        ) from exc
    if len(data) + len(line) > MAX_GUIDELINE_BYTES:
        raise ConflictError(
            gettext("guideline.md is over %(size)s KB; nothing was added.") % {"size": MAX_GUIDELINE_BYTES // 1024}
        )
    current = data.decode("utf-8", errors="replace")
    if line.strip() in current:
        return False
    text = f"{current.rstrip()}\n\n{line.strip()}\n" if current.strip() else f"{line.strip()}\n"
    try:
        source_for(folder=folder).overwrite(GUIDELINE_PATH, text.encode("utf-8"), mime_type="text/markdown")
    except SourceError as exc:
        raise ConflictError(gettext("guideline.md could not be written: %(reason)s") % {"reason": exc}) from exc
    return True


def _source_bytes(*, folder: Folder, file: File | None) -> bytes:
    if file is None and folder.source != SourceKind.LOCAL:
        raise SourceNotFoundError("guideline.md is not in the index")  # Drive reaches files by id
    entry = SourceEntry(
        external_id=file.external_id if file else GUIDELINE_PATH,
        path=GUIDELINE_PATH,
        name=GUIDELINE_PATH,
        mime_type=file.mime_type if file else "text/markdown",
        size=0,
        checksum="",
        modified_time=timezone.now(),
    )
    data, _ = source_for(folder=folder).read_bytes(entry)
    return data


def _indexed_text(file_id: int) -> str:
    return "\n".join(file_chunk_texts(file_id=file_id))[:MAX_GUIDELINE_BYTES]


def _rule(*, target: str, text: str, line: int, specific: bool) -> GuidelineRule:
    words = set(organize_terms(text)) | set(folder_terms(target))
    return GuidelineRule(target=target, text=text, line=line, terms=frozenset(words), specific=specific)


def _line_target(line: str, *, known: set[str]) -> str | None:
    """The folder a line sends files to: the one after a filing verb, else the first named."""
    refs: list[tuple[int, str]] = []
    for match in _TICKED.finditer(line):
        folder = _folder_of(match.group("ref"), known=known)
        if folder:
            refs.append((match.start(), folder))
    unticked = _TICKED.sub(lambda match: " " * len(match.group(0)), line)
    refs += [(match.start(), match.group("ref")) for match in _BARE_REF.finditer(unticked)]
    if not refs:
        return None
    refs.sort()
    for start, folder in refs:
        if _VERB_BEFORE.search(line[:start].lower()):
            return folder
    return refs[0][1]


def _folder_of(text: str, *, known: set[str]) -> str | None:
    """``taxes/`` or ``Work/Reports/`` as written, or a known folder's bare name; else None."""
    candidate = text.strip()
    if not _SLUG.match(candidate) or ".." in candidate.split("/"):
        return None
    if candidate.endswith("/") or candidate.lower() in known:
        return candidate.rstrip("/") + "/"
    return None

"""One file's preparation for indexing: skip junk, read it, parse it, cap it and chunk it, within
its time budget. A file that ends here is settled (skipped or failed) with its reason."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.utils.translation import gettext_noop

from apps.core.metrics import indexing_stage_timed
from apps.core.stored_messages import StoredMessage
from apps.library.budget import FileBudget, file_budget_new, file_budget_running, text_cap_reason
from apps.library.chunking import CHUNKING, ChunkPiece, chunk_document
from apps.library.file_rows import file_settle
from apps.library.junk import junk_by_content, junk_by_name
from apps.library.language import folder_language_detect
from apps.library.models import File, FileStatus
from apps.library.parsing import ParseError, UnsupportedDocument, parse_document
from apps.library.progress import FolderCounts
from apps.library.quotas import QuotaInFlight, file_quota_reason
from apps.library.sources import SourceError, SourceTransientError, source_entry_of, source_for
from apps.llm.usage_context import usage_context


@dataclass
class FileOutcome:
    file_id: int
    path: str
    status: str
    error: str = ""
    chunks: int = 0
    noop: bool = False
    counts: FolderCounts | None = None


@dataclass
class Claimed:
    file: File
    token: str
    job_id: int
    mime_type: str = ""
    text: str = ""
    pieces: list[ChunkPiece] = field(default_factory=list)
    budget: FileBudget | None = None
    in_flight: QuotaInFlight | None = None


@indexing_stage_timed("prepare")
def file_prepare(claimed: Claimed) -> FileOutcome | None:
    """Read, parse and chunk; an outcome when the file ends here (skipped, failed, lost)."""
    file = claimed.file
    junk = junk_by_name(path=file.path)
    if junk:
        return claimed_settle(claimed, FileStatus.SKIPPED, junk)
    if file.size > settings.INDEX_MAX_FILE_BYTES:
        return claimed_settle(claimed, FileStatus.SKIPPED, too_big(file.size))
    owner_id = file.folder.owner_id
    over_quota = file_quota_reason(file=file, owner_id=owner_id, in_flight=claimed.in_flight)
    if over_quota:
        return claimed_settle(claimed, FileStatus.SKIPPED, over_quota, retry=True)
    claimed.budget = file_budget_new(size=file.size)
    with file_budget_running(claimed.budget) as budget:
        try:
            data, claimed.mime_type = source_for(folder=file.folder).read_bytes(source_entry_of(file))
        except SourceTransientError:
            raise
        except SourceError as exc:
            return claimed_settle(claimed, FileStatus.FAILED, exc.message)
        if len(data) > settings.INDEX_MAX_FILE_BYTES:
            return claimed_settle(claimed, FileStatus.SKIPPED, too_big(len(data)))
        budget.size = len(data)
        junk = junk_by_content(path=file.path, mime_type=claimed.mime_type, data=data)
        if junk:
            return claimed_settle(claimed, FileStatus.SKIPPED, junk)
        try:
            # A parser's model call (OpenAI transcribing a recording) is the folder owner's usage.
            with usage_context(user_id=owner_id, folder_id=file.folder_id):
                document = parse_document(data=data, mime_type=claimed.mime_type, name=file.name)
        except UnsupportedDocument as exc:
            return claimed_settle(claimed, FileStatus.SKIPPED, exc.message)
        except ParseError as exc:
            return claimed_settle(claimed, FileStatus.FAILED, exc.message)
        budget.text_chars = len(document.text)
        too_much = text_cap_reason(chars=len(document.text))
        if too_much:
            return claimed_settle(claimed, FileStatus.SKIPPED, too_much)
        budget.check(StoredMessage(gettext_noop("parsing")))
        claimed.text = document.text
        claimed.pieces = chunk_document(document=document)
        budget.check(CHUNKING)
    if not claimed.pieces:
        return claimed_settle(claimed, FileStatus.SKIPPED, StoredMessage(gettext_noop("no text to index")))
    chunks = len(claimed.pieces)
    over_quota = file_quota_reason(file=file, owner_id=owner_id, chunks=chunks, in_flight=claimed.in_flight)
    if over_quota:
        return claimed_settle(claimed, FileStatus.SKIPPED, over_quota, retry=True)
    if claimed.in_flight is not None:
        claimed.in_flight.add(file=file, owner_id=owner_id, chunks=chunks)
    # Before its chunks are written, so their keyword vectors are built in the language found; off
    # the file's budget, as the detector's first call loads its model (about a second).
    folder_language_detect(folder=file.folder, text=claimed.text)
    return None


def claimed_lost(claimed: Claimed) -> FileOutcome:
    lost = StoredMessage(gettext_noop("claim lost to a newer run"))
    return FileOutcome(claimed.file.pk, claimed.file.path, FileStatus.PENDING, lost, noop=True)


def claimed_settle(claimed: Claimed, status: str, error: str, *, retry: bool = False) -> FileOutcome:
    """``retry``: the file is left unsettled (no indexed checksum), so the next sync tries it again."""
    file = claimed.file
    checksum = "" if retry else file.checksum
    if not file_settle(file_id=file.pk, status=status, error=error, token=claimed.token, checksum=checksum):
        return claimed_lost(claimed)
    return FileOutcome(file.pk, file.path, status, error)


def too_big(size: int) -> str:
    return StoredMessage(
        gettext_noop("file is %(size)s bytes, more than the limit of %(limit)s (INDEX_MAX_FILE_BYTES)"),
        size=size,
        limit=settings.INDEX_MAX_FILE_BYTES,
    )

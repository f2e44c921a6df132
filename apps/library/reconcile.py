"""A folder's File rows made to match its source: a full listing, or a change set (Drive).

Both paths lock the folder row first, so reconciles of one folder never interleave, and write
through one plan of row changes: new entries created pending, changed content marked pending
(its old chunks serve until new ones replace them), new paths and metadata applied in place.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext_noop

from apps.core.metrics import indexing_stage_timed
from apps.core.stored_messages import StoredMessage, stored_message_fields
from apps.library.exclusions import exclusion_for
from apps.library.file_rows import SETTLED, file_settle
from apps.library.listing_rows import ListedRow, listed_rows
from apps.library.models import File, FileStatus, Folder
from apps.library.sources import ChangeSet, SourceEntry, SourceProblem

# What a listing knows of a file; status and everything after belong to indexing.
_LISTING_FIELDS = ["external_id", "path", "name", "mime_type", "size", "checksum", "modified_time", "source_extra"]


@dataclass
class ReconcileResult:
    added: int = 0
    modified: int = 0
    deleted: int = 0
    moved: int = 0
    unchanged: int = 0
    excluded: int = 0
    problems: list[SourceProblem] = field(default_factory=list)
    to_index: list[int] = field(default_factory=list)


@indexing_stage_timed("reconcile")
def folder_reconcile(
    *, folder: Folder, entries: Iterable[SourceEntry], problems: Sequence[SourceProblem] = ()
) -> ReconcileResult:
    """Make the folder's File rows match a full listing.

    Added files are created, modified ones (checksum changed) marked pending, vanished ones
    deleted with their chunks, and moved ones (same external id at a new path, or a vanished
    file's checksum reappearing under a new id) get their new path and keep their chunks.
    Problems become skipped rows carrying the reason, so they show up in status and API.
    Paths the folder's exclude patterns match are not listed: their rows, if any, go too.
    """
    exclusion = exclusion_for(folder.exclude_patterns)
    listed: dict[str, SourceEntry] = {}
    excluded = 0
    for entry in entries:
        if exclusion.excludes(entry.path):
            excluded += 1
        else:
            listed[entry.external_id] = entry
    troubled = {
        problem.path: problem
        for problem in problems
        if problem.path not in listed and not exclusion.excludes(problem.path)
    }
    result = ReconcileResult(problems=list(troubled.values()), excluded=excluded)
    with transaction.atomic():
        _lock(folder)
        existing = listed_rows(File.objects.filter(folder=folder))
        moves = _pair_moves(existing, listed, troubled)
        changes = _RowChanges.plan(folder=folder, listed=listed, known={**existing, **moves}, result=result)
        moved_away = {file.pk for file in moves.values()}
        gone = [
            file.pk
            for external_id, file in existing.items()
            if external_id not in listed and external_id not in troubled and file.pk not in moved_away
        ]
        result.deleted = File.objects.filter(pk__in=gone).delete()[1].get(File._meta.label, 0)
        _record_problems(folder, existing, troubled)
        changes.save()
        result.to_index = list(
            File.objects.filter(folder=folder).exclude(SETTLED).order_by("path").values_list("pk", flat=True)
        )
    return result


@indexing_stage_timed("reconcile")
def changes_apply(*, folder: Folder, changes: ChangeSet) -> ReconcileResult:
    """Apply a change set (upserted entries, removed ids) to the folder's File rows.

    Ids survive renames and moves there, so a new path alone is a move. Removed ids the folder
    never held are ignored. Unindexable entries are left to the next full listing, which
    records them. An entry now under an exclude pattern counts as removed, and so does any row
    the patterns match since they changed.
    """
    exclusion = exclusion_for(folder.exclude_patterns)
    listed = {entry.external_id: entry for entry in changes.upserted if not exclusion.excludes(entry.path)}
    excluded_ids = [entry.external_id for entry in changes.upserted if entry.external_id not in listed]
    result = ReconcileResult(excluded=len(excluded_ids))
    with transaction.atomic():
        _lock(folder)
        known = listed_rows(File.objects.filter(folder=folder, external_id__in=list(listed)))
        rows = _RowChanges.plan(folder=folder, listed=listed, known=known, result=result)
        newly_excluded = [
            pk for pk, path in File.objects.filter(folder=folder).values_list("pk", "path") if exclusion.excludes(path)
        ]
        removed = File.objects.filter(folder=folder).filter(
            Q(external_id__in=[*changes.removed_ids, *excluded_ids]) | Q(pk__in=newly_excluded)
        )
        result.deleted = removed.delete()[1].get(File._meta.label, 0)
        rows.save()
        result.to_index = list(
            File.objects.filter(folder=folder, external_id__in=rows.touched())
            .exclude(SETTLED)
            .order_by("path")
            .values_list("pk", flat=True)
        )
    return result


def _lock(folder: Folder) -> None:
    Folder.objects.select_for_update().filter(pk=folder.pk).values_list("pk").first()


@dataclass
class _RowChanges:
    creates: list[File] = field(default_factory=list)
    updates: list[File] = field(default_factory=list)
    modified_ids: list[int] = field(default_factory=list)

    @classmethod
    def plan(
        cls, *, folder: Folder, listed: dict[str, SourceEntry], known: dict[str, ListedRow], result: ReconcileResult
    ) -> _RowChanges:
        """``known``: the row each listed external id already has (or takes over, when moved)."""
        changes = cls()
        for external_id, entry in listed.items():
            row = known.get(external_id)
            if row is None:
                changes.creates.append(_file_from(folder, entry))
                result.added += 1
                continue
            moved = row.path != entry.path
            modified = row.checksum != entry.checksum
            result.moved += moved and not modified
            result.modified += modified
            result.unchanged += not moved and not modified
            if modified:
                changes.modified_ids.append(row.pk)
            if moved or modified or _metadata_changed(row, entry):
                # Only the listing's columns are written (bulk_update), so the pk is all it needs.
                file = File(pk=row.pk)
                _apply_entry(file, entry)
                changes.updates.append(file)
        return changes

    def save(self) -> None:
        # Listing columns only: status belongs to indexing, which may be writing it right now.
        File.objects.bulk_update(self.updates, _LISTING_FIELDS, batch_size=500)
        # New content: an indexing run still on the old one loses its claim; old chunks stay
        # searchable until new ones replace them.
        File.objects.filter(pk__in=self.modified_ids).update(status=FileStatus.PENDING)
        File.objects.bulk_create(self.creates, batch_size=500)

    def touched(self) -> list[str]:
        return [file.external_id for file in (*self.creates, *self.updates)]


def _pair_moves(
    existing: dict[str, ListedRow], listed: dict[str, SourceEntry], troubled: dict[str, SourceProblem]
) -> dict[str, ListedRow]:
    """New external ids that are a vanished file come back elsewhere, paired by checksum."""
    vanished: dict[str, list[ListedRow]] = defaultdict(list)
    for external_id, file in existing.items():
        if external_id not in listed and external_id not in troubled and file.checksum:
            vanished[file.checksum].append(file)
    moves: dict[str, ListedRow] = {}
    for external_id, entry in listed.items():
        if external_id not in existing and vanished.get(entry.checksum):
            moves[external_id] = vanished[entry.checksum].pop()
    return moves


def _file_from(folder: Folder, entry: SourceEntry) -> File:
    file = File(folder=folder, status=FileStatus.PENDING)
    _apply_entry(file, entry)
    return file


def _metadata_changed(row: ListedRow, entry: SourceEntry) -> bool:
    return (row.size, row.modified_time, row.mime_type, row.name, row.source_extra) != (
        entry.size,
        entry.modified_time,
        entry.mime_type[:255],
        entry.name[:255],
        dict(entry.extra),
    )


def _apply_entry(file: File, entry: SourceEntry) -> None:
    file.external_id = entry.external_id
    file.path = entry.path
    file.name = entry.name[:255]
    file.mime_type = entry.mime_type[:255]
    file.size = entry.size
    file.checksum = entry.checksum
    file.modified_time = entry.modified_time
    file.source_extra = dict(entry.extra)


def _record_problems(folder: Folder, existing: dict[str, ListedRow], troubled: dict[str, SourceProblem]) -> None:
    for path, problem in troubled.items():
        reason = StoredMessage(gettext_noop("not indexed: %(reason)s"), reason=problem.reason)
        file = existing.get(path)
        if file is None:
            File.objects.create(
                folder=folder,
                external_id=path,
                path=path,
                name=PurePosixPath(path).name[:255],
                status=FileStatus.SKIPPED,
                **stored_message_fields("error", reason),
            )
        elif file.status != FileStatus.SKIPPED or file.error != reason:
            file_settle(file_id=file.pk, status=FileStatus.SKIPPED, error=reason, checksum="", clear_checksum=True)

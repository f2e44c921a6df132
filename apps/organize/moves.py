"""Moving one file at its source and in the index, keeping its chunks (no re-embedding).

A move happens inside the caller's transaction, under the folder's row lock (the lock a sync's
reconcile takes), so a sync never interleaves with it. Before touching the source it checks
that the index row is where the caller expects, settled (not being re-indexed), not colliding
with another file, and that the file at the source still has the indexed content. Any conflict
is a 409 with nothing changed. If the index update fails after the source moved, the source move
is reversed before the error propagates.

The index row takes the moved entry's external id (local ids are paths), path, name and
checksum: the content did not change, so the indexed checksum follows, and the next sync sees
an unchanged file.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

from django.utils.translation import gettext

from apps.core.api import ApplicationError, ConflictError
from apps.core.stored_messages import message_shown
from apps.library.models import File, FileStatus, Folder
from apps.library.selectors import file_folder_id_get, folder_file_exists
from apps.library.sources import (
    Source,
    SourceEntry,
    SourceError,
    SourceNotFoundError,
    SourceTransientError,
    source_entry_of,
    source_for,
)

logger = logging.getLogger(__name__)

_SETTLED = (FileStatus.INDEXED, FileStatus.SKIPPED)
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_MD5 = re.compile(r"^[0-9a-f]{32}$")


class SourceUnavailableError(ApplicationError):
    status_code = 503


def file_relocate(*, file_id: int, expected_path: str, new_path: str) -> tuple[File, str]:
    """Move the file from `expected_path` to `new_path`; returns the updated row and its old path.

    Call inside `transaction.atomic()`.
    """
    folder_id = file_folder_id_get(file_id=file_id)
    if folder_id is None:
        raise ConflictError(gettext("%(path)s is no longer in the index; nothing was moved.") % {"path": expected_path})
    # The lock a sync's reconcile takes: the two never interleave.
    Folder.objects.select_for_update().filter(pk=folder_id).values_list("pk").first()
    file = (
        File.objects.select_for_update(of=("self",))
        .select_related("folder")
        .defer("embedding", "search_vector")
        .get(pk=file_id)
    )
    _check_index(file=file, expected_path=expected_path, new_path=new_path)
    source = source_for(folder=file.folder)
    entry = source_entry_of(file)
    _check_unchanged(source=source, entry=entry, file=file)
    with _source_errors(file=file, doing="move"):
        moved = source.move(entry, new_path)
    old_path = file.path
    try:
        settled_checksum = file.indexed_checksum == file.checksum
        file.external_id = moved.external_id
        file.path = moved.path
        file.name = moved.name[:255]
        file.checksum = moved.checksum
        if settled_checksum:
            file.indexed_checksum = moved.checksum
        file.modified_time = moved.modified_time
        file.save(
            update_fields=["external_id", "path", "name", "checksum", "indexed_checksum", "modified_time", "updated_at"]
        )
    except Exception:
        _reverse(source=source, moved=moved, path=old_path)
        raise
    return file, old_path


def _check_index(*, file: File, expected_path: str, new_path: str) -> None:
    if file.path != expected_path:
        raise ConflictError(
            gettext("%(path)s was moved or renamed since (it is now %(now)s); nothing was moved.")
            % {"path": expected_path, "now": file.path}
        )
    if new_path == file.path:
        raise ApplicationError(gettext("%(path)s is already there.") % {"path": file.path})
    if file.status not in _SETTLED or file.indexed_checksum != file.checksum:
        raise ConflictError(
            gettext("%(path)s changed and is being re-indexed; try again once it is indexed.") % {"path": file.path}
        )
    if folder_file_exists(folder_id=file.folder_id, path=new_path):
        raise ConflictError(gettext("%(path)s already exists; nothing was moved.") % {"path": new_path})


def _check_unchanged(*, source: Source, entry: SourceEntry, file: File) -> None:
    """The content at the source is still what was indexed (when its checksum can say so)."""
    algorithm = "sha256" if _SHA256.match(file.checksum) else "md5" if _MD5.match(file.checksum) else None
    if algorithm is None:
        return  # a size/mtime stamp or a Drive version: the source move itself is the only check
    with _source_errors(file=file, doing="read"):
        data, _ = source.read_bytes(entry)
    if hashlib.new(algorithm, data, usedforsecurity=False).hexdigest() != file.checksum:
        raise ConflictError(
            gettext("%(path)s changed since it was indexed; nothing was moved. It will be re-indexed on the next sync.")
            % {"path": file.path}
        )


@contextmanager
def _source_errors(*, file: File, doing: str) -> Iterator[None]:
    """A source's failure as the API's answer: 503 when it may pass, otherwise a 409."""
    try:
        yield
    except SourceTransientError as exc:
        raise SourceUnavailableError(
            gettext("The folder's source is unavailable right now (%(reason)s); try again.") % {"reason": exc}
        ) from exc
    except SourceNotFoundError as exc:
        raise ConflictError(
            gettext("%(path)s is gone from the folder; nothing was moved.") % {"path": file.path}
        ) from exc
    except SourceError as exc:
        failed = (
            gettext("Could not move %(path)s: %(reason)s")
            if doing == "move"
            else gettext("Could not read %(path)s: %(reason)s")
        )
        raise ConflictError(failed % {"path": file.path, "reason": message_shown(exc)}) from exc


def _reverse(*, source: Source, moved: SourceEntry, path: str) -> None:
    try:
        source.move(moved, path)
    except SourceError:
        logger.exception("could not move %s back to %s after a failed index update", moved.path, path)

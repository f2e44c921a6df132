"""Per-user quotas over the folders a user owns (shared folders count for their owner): folders,
indexed files, their bytes and their chunks.

A limit comes from the user's `UserQuota` row, else from the setting; None is no limit. Files are
judged one by one as indexing reaches them, so the files already indexed keep their place and new
ones take what room is left in the order they are indexed (path order within a folder).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Count, Q, Sum
from django.utils.translation import gettext_noop, ngettext

from apps.core.api import ApplicationError
from apps.core.stored_messages import StoredMessage
from apps.library.models import File, FileStatus, Folder, UserQuota


@dataclass(frozen=True)
class QuotaAmounts:
    folders: int | None
    files: int | None
    bytes: int | None
    chunks: int | None

    def as_dict(self) -> dict[str, int | None]:
        return asdict(self)


@dataclass
class QuotaInFlight:
    """Files an indexing run has admitted but not yet written (it prepares files while earlier ones
    embed): the database does not count them yet. File id -> (owner id, bytes, chunks). It also
    keeps each owner's limits for the run, read once rather than for every file."""

    files: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    _limits: dict[int, QuotaAmounts] = field(default_factory=dict)

    def limits_of(self, *, owner_id: int) -> QuotaAmounts:
        if owner_id not in self._limits:
            self._limits[owner_id] = quota_limits(user_id=owner_id)
        return self._limits[owner_id]

    def add(self, *, file: File, owner_id: int, chunks: int) -> None:
        self.files[file.pk] = (owner_id, file.size, chunks)

    def discard(self, *, file_id: int) -> None:
        self.files.pop(file_id, None)

    def of(self, *, owner_id: int, exclude_file_id: int) -> tuple[int, int, int]:
        held = [v for pk, v in self.files.items() if v[0] == owner_id and pk != exclude_file_id]
        return len(held), sum(v[1] for v in held), sum(v[2] for v in held)


def quota_limits(*, user_id: int) -> QuotaAmounts:
    override = UserQuota.objects.filter(user_id=user_id).first()

    def pick(field: str, setting: int | None) -> int | None:
        own = getattr(override, field, None) if override is not None else None
        return own if own is not None else setting

    return QuotaAmounts(
        folders=pick("folders", settings.QUOTA_FOLDERS_PER_USER),
        files=pick("files", settings.QUOTA_FILES_PER_USER),
        bytes=pick("bytes", settings.QUOTA_BYTES_PER_USER),
        chunks=pick("chunks", settings.QUOTA_CHUNKS_PER_USER),
    )


def quota_usage(*, user_id: int) -> QuotaAmounts:
    """What the user's owned folders hold: the folders, and their indexed files, bytes and chunks."""
    files, size, chunks = _files_held(user_id=user_id)
    return QuotaAmounts(folders=Folder.objects.filter(owner_id=user_id).count(), files=files, bytes=size, chunks=chunks)


def _files_held(*, user_id: int, exclude_file_ids: Collection[int] = ()) -> tuple[int, int, int]:
    """Indexed files, their bytes and chunks (``exclude_file_ids`` leaves out the files being judged
    or in flight, so re-indexing a file never counts it twice). A changed file waiting to be indexed
    again still holds its chunks, and so its place."""
    holding = Q(status=FileStatus.INDEXED) | Q(chunk_count__gt=0)
    indexed = File.objects.filter(holding, folder__owner_id=user_id)
    if exclude_file_ids:
        indexed = indexed.exclude(pk__in=list(exclude_file_ids))
    totals = indexed.aggregate(files=Count("pk"), bytes=Sum("size"), chunks=Sum("chunk_count"))
    return totals["files"], totals["bytes"] or 0, totals["chunks"] or 0


def folder_quota_check(*, owner_id: int) -> None:
    """Inside the creating transaction: the owner's row is locked, so two creations at once
    cannot both take the last place."""
    limit = quota_limits(user_id=owner_id).folders
    if limit is None:
        return
    get_user_model().objects.select_for_update().filter(pk=owner_id).values_list("pk").first()
    if Folder.objects.filter(owner_id=owner_id).count() >= limit:
        raise ApplicationError(
            ngettext(
                "You have reached your limit of %(limit)s folder.",
                "You have reached your limit of %(limit)s folders.",
                limit,
            )
            % {"limit": limit}
        )


def file_quota_reason(
    *, file: File, owner_id: int, chunks: int | None = None, in_flight: QuotaInFlight | None = None
) -> str:
    """Why ``file`` may not be indexed for its folder's owner, or "" when it fits. Without
    ``chunks`` (not chunked yet) only the file and byte limits are judged."""
    limits = in_flight.limits_of(owner_id=owner_id) if in_flight else quota_limits(user_id=owner_id)
    if limits.files is None and limits.bytes is None and limits.chunks is None:
        return ""
    used_files, used_bytes, used_chunks = _files_held(
        user_id=owner_id, exclude_file_ids=[file.pk, *(in_flight.files if in_flight else ())]
    )
    files, size, held_chunks = in_flight.of(owner_id=owner_id, exclude_file_id=file.pk) if in_flight else (0, 0, 0)
    if limits.files is not None and used_files + files + 1 > limits.files:
        return StoredMessage(gettext_noop("quota reached: %(count)s files"), count=limits.files)
    if limits.bytes is not None and used_bytes + size + file.size > limits.bytes:
        return StoredMessage(gettext_noop("quota reached: %(count)s bytes"), count=limits.bytes)
    if chunks is not None and limits.chunks is not None and used_chunks + held_chunks + chunks > limits.chunks:
        return StoredMessage(gettext_noop("quota reached: %(count)s chunks"), count=limits.chunks)
    return ""

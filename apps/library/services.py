"""Writes of folders: creating, deleting and queueing their indexing."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import IntegrityError, connection, transaction
from django.utils.translation import gettext as _

from apps.core.api import ApplicationError, ConflictError
from apps.core.audit import AuditAction, audit_record
from apps.core.stored_messages import message_shown
from apps.library import enqueue
from apps.library.exclusions import DEFAULT_EXCLUDE_PATTERNS, ExcludePatternError, exclude_patterns_clean
from apps.library.indexing import files_enqueue
from apps.library.language import SEARCH_LANGUAGES, folder_keywords_reindex_enqueue
from apps.library.models import File, FileStatus, Folder, FolderStatus, SourceKind
from apps.library.progress import FolderProgress, folder_counters_refresh
from apps.library.quotas import folder_quota_check
from apps.library.sources import ROOT_CHECKS, SourceAuthError, SourceError, SourceNotFoundError

# One advisory lock for every local-folder creation (an arbitrary constant, unique in this project).
LOCAL_CLAIM_LOCK = 7_301_544_019

# Bounds of a folder's sync interval: beat looks for due folders once a minute, and a folder
# left a week without a look is no longer "kept in sync" (the full listing's daily net aside).
SYNC_INTERVAL_MIN_SECONDS = 60
SYNC_INTERVAL_MAX_SECONDS = 7 * 86_400

# What a person may ask to index again: files that failed, or were skipped with a reason.
RETRYABLE = (FileStatus.FAILED, FileStatus.SKIPPED)


def local_roots(*, user: AbstractBaseUser | AnonymousUser) -> list[Path]:
    """The directories this user may connect local folders under: `{username}` in a configured
    root stands for the user's own name, so roots can be per user. A name that is not one plain
    directory name gets no root under such an entry (see `_user_root`)."""
    roots = (_user_root(entry=entry, username=user.get_username()) for entry in settings.LOCAL_FOLDER_ROOTS)
    return [root for root in roots if root is not None]


def _user_root(*, entry: str, username: str) -> Path | None:
    """`entry` with `username` put in, or None unless each part naming the user stays one
    directory strictly inside its parent: `..` would climb above every user's root, `.` (or no
    name at all) be the directory holding them all, a `/` reach another user's root or anywhere."""
    parts = Path(entry).parts
    named = [part.replace("{username}", username) for part in parts]
    for template, part in zip(parts, named, strict=True):
        if "{username}" in template and (part in ("", ".", "..") or "/" in part or "\x00" in part):
            return None
    return Path(*named).resolve()


def local_path_resolve(*, path: str, user: User) -> Path:
    """The real path of a local folder, refused unless it lies under one of the user's roots."""
    if "\x00" in path:
        raise ApplicationError(_("The path contains a NUL byte."))
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        raise ApplicationError(_("The path must be absolute."))
    resolved = candidate.resolve()
    roots = local_roots(user=user)
    if not any(resolved == root or root in resolved.parents for root in roots):
        extra = {"allowed_roots": [str(r) for r in roots]}
        if len(roots) < len(settings.LOCAL_FOLDER_ROOTS):
            raise ApplicationError(
                _(
                    "The path is outside the allowed local roots; your user name (%(name)r) cannot "
                    "name a directory, so the per-user roots ({username}) give you none."
                )
                % {"name": user.get_username()},
                extra=extra,
            )
        raise ApplicationError(_("The path is outside the allowed local roots."), extra=extra)
    if not resolved.is_dir():
        raise ApplicationError(_("The path is not an existing directory."))
    return resolved


def _local_path_claim(*, owner: User, path: Path) -> None:
    """Refuse a directory that another user connected, or that contains or lies inside one: its
    files are theirs, and reading them here would copy them into this account. Called in the
    creating transaction under a lock, so two users racing for one directory cannot both win."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LOCAL_CLAIM_LOCK])
    others = Folder.objects.filter(source=SourceKind.LOCAL).exclude(owner=owner)
    overlapping = [
        str(path),
        *[str(parent) for parent in path.parents],
    ]
    inside = others.filter(external_id__startswith=str(path).rstrip("/") + "/")
    if others.filter(external_id__in=overlapping).exists() or inside.exists():
        raise ConflictError(
            _(
                "Another user has connected this directory (or one inside or around it); "
                "ask them to share their folder with you instead."
            )
        )


def folder_create(
    *,
    owner: User,
    source: str,
    external_id: str,
    name: str = "",
    exclude_patterns: str | None = None,
    start_indexing: bool = True,
) -> Folder:
    patterns = _patterns_clean(DEFAULT_EXCLUDE_PATTERNS if exclude_patterns is None else exclude_patterns)
    if source == SourceKind.LOCAL:
        external_id = str(local_path_resolve(path=external_id, user=owner))
        name = name or Path(external_id).name
    elif source == SourceKind.DRIVE:
        if not external_id.strip():
            raise ApplicationError(_("A Drive folder id is required."))
        name = name or _source_root_name(owner=owner, source=source, external_id=external_id) or external_id
    else:
        raise ApplicationError(_("Unknown source %(source)r.") % {"source": source})
    try:
        with transaction.atomic():
            folder_quota_check(owner_id=owner.pk)
            if source == SourceKind.LOCAL:
                _local_path_claim(owner=owner, path=Path(external_id))
            folder = Folder.objects.create(
                owner=owner,
                source=source,
                external_id=external_id,
                name=name[:255],
                exclude_patterns=patterns,
                sync_interval_seconds=settings.FOLDER_SYNC_INTERVAL_SECONDS,
            )
    except IntegrityError as exc:
        raise ConflictError(_("This folder is already connected.")) from exc
    if start_indexing:
        folder_index_enqueue(folder=folder)
    return folder


def _source_root_name(*, owner: User, source: str, external_id: str) -> str:
    """The folder's name at its source, checked before it is connected: an id the owner's
    credentials cannot read is refused with a reason instead of failing later in a worker."""
    check = ROOT_CHECKS.get(source)
    if check is None:
        return ""
    try:
        return check(Folder(owner=owner, source=source, external_id=external_id))
    except SourceNotFoundError:
        raise ApplicationError(
            _("This Drive folder does not exist or your Google account cannot read it; pick one from the list.")
        ) from None
    except SourceAuthError as exc:
        raise ApplicationError(message_shown(exc)) from None
    except SourceError as exc:
        raise ApplicationError(
            _("The folder could not be checked: %(reason)s") % {"reason": message_shown(exc)}
        ) from None


def files_retry(*, folder: Folder, file_ids: list[int] | None = None) -> list[int]:
    """Index failed or skipped files again (``file_ids``, or every failed file); returns their ids."""
    files = File.objects.filter(folder=folder, status__in=RETRYABLE)
    files = files.filter(pk__in=file_ids) if file_ids is not None else files.filter(status=FileStatus.FAILED)
    with transaction.atomic():
        ids = list(files.select_for_update().values_list("pk", flat=True))
        if not ids:
            return []
        # A cleared indexed checksum makes the file unsettled, so indexing claims it again.
        File.objects.filter(pk__in=ids).update(
            status=FileStatus.PENDING, error="", error_i18n=None, indexed_checksum=""
        )
        Folder.objects.filter(pk=folder.pk).update(status=FolderStatus.INDEXING)
        files_enqueue(folder_id=folder.pk, file_ids=ids)
    counts = folder_counters_refresh(folder_id=folder.pk)
    FolderProgress(folder.pk).indexing_started(reason="retry", counts=counts)
    return ids


def folder_update(
    *,
    folder: Folder,
    name: str | None = None,
    exclude_patterns: str | None = None,
    sync_interval_seconds: int | None = None,
    language: str | None = None,
) -> Folder:
    """Rename, set how often it syncs, or change what is excluded: a sync then drops newly excluded
    files from the index and picks up files no longer excluded (Drive: with a full listing, as
    changes would not show them). A new language re-indexes the folder's keyword vectors."""
    fields = ["updated_at"]
    if name is not None:
        if not name.strip():
            raise ApplicationError(_("The name cannot be empty."))
        folder.name = name.strip()[:255]
        fields.append("name")
    if sync_interval_seconds is not None:
        if not SYNC_INTERVAL_MIN_SECONDS <= sync_interval_seconds <= SYNC_INTERVAL_MAX_SECONDS:
            raise ApplicationError(
                _("The sync interval must be between %(low)s and %(high)s seconds.")
                % {"low": SYNC_INTERVAL_MIN_SECONDS, "high": SYNC_INTERVAL_MAX_SECONDS}
            )
        folder.sync_interval_seconds = sync_interval_seconds
        fields.append("sync_interval_seconds")
    relanguage = language is not None and language != folder.language
    if language is not None:
        if language not in SEARCH_LANGUAGES:
            raise ApplicationError(
                _("Unknown language %(language)r.") % {"language": language}, extra={"field": "language"}
            )
        folder.language = language
        fields.append("language")
    resync = False
    if exclude_patterns is not None:
        patterns = _patterns_clean(exclude_patterns)
        resync = patterns != folder.exclude_patterns
        folder.exclude_patterns = patterns
        fields.append("exclude_patterns")
        if resync:
            folder.last_full_listing_at = None
            fields.append("last_full_listing_at")
    with transaction.atomic():
        folder.save(update_fields=fields)
        if resync:
            folder_sync_enqueue(folder=folder)
        if relanguage:
            folder_keywords_reindex_enqueue(folder_id=folder.pk)
    return folder


def _patterns_clean(text: str) -> str:
    try:
        return exclude_patterns_clean(text=text)
    except ExcludePatternError as exc:
        raise ApplicationError(str(exc), extra={"field": "exclude_patterns"}) from exc


def folder_index_enqueue(*, folder: Folder) -> None:
    Folder.objects.filter(pk=folder.pk).update(status=FolderStatus.INDEXING)
    transaction.on_commit(lambda: enqueue.index_folder(folder.pk))


def folder_sync_enqueue(*, folder: Folder) -> None:
    transaction.on_commit(lambda: enqueue.sync_folder(folder.pk))


def folder_delete(*, folder: Folder, actor: User | None = None) -> None:
    """Disconnect a folder: its files, chunks and shares go (ON DELETE CASCADE); the files at
    the source are never touched. The audit entry outlives it."""
    folder_id, name = folder.pk, folder.name
    folder.delete()
    audit_record(actor=actor, action=AuditAction.REMOVE, folder_id=folder_id, folder_name=name, target=name)

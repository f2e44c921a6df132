"""Folders, their files, the searchable chunks, and the jobs that index them."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import F, Value
from django.db.models.functions import Collate, Upper
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from apps.core.models import TimestampedModel
from apps.library import vector_index
from apps.library.exclusions import DEFAULT_EXCLUDE_PATTERNS, exclude_patterns_validator


class SourceKind(models.TextChoices):
    LOCAL = "local", _("Local directory")
    DRIVE = "drive", "Google Drive"


class FolderStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    INDEXING = "indexing", _("Indexing")
    READY = "ready", _("Ready")
    SYNCING = "syncing", _("Syncing")
    NEEDS_REAUTH = "needs_reauth", _("Needs re-authorisation")
    ERROR = "error", _("Error")


class Folder(TimestampedModel):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="folders")
    source = models.CharField(max_length=16, choices=SourceKind.choices)
    external_id = models.CharField(max_length=1024, help_text="Drive folder id or local path.")
    name = models.CharField(max_length=255)
    status = models.CharField(max_length=16, choices=FolderStatus.choices, default=FolderStatus.PENDING)
    files_total = models.PositiveIntegerField(default=0)
    files_indexed = models.PositiveIntegerField(default=0)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    last_full_listing_at = models.DateTimeField(null=True, blank=True)
    sync_cursor = models.CharField(max_length=512, blank=True, help_text="Drive changes page token.")
    sync_interval_seconds = models.PositiveIntegerField(default=3600)
    # Set while a sync runs; a conditional UPDATE claims it so one folder never syncs twice.
    sync_started_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_i18n = models.JSONField(null=True, blank=True, help_text="last_error's msgid and parameters.")
    exclude_patterns = models.TextField(
        blank=True,
        default=DEFAULT_EXCLUDE_PATTERNS,
        # Rows written outside the ORM (raw inserts, a reversed and reapplied schema) get them too.
        db_default=DEFAULT_EXCLUDE_PATTERNS,
        validators=[exclude_patterns_validator],
        help_text="Paths never indexed, one gitignore pattern per line (e.g. node_modules/, *.min.js).",
    )
    # A PostgreSQL text search configuration (apps/library/language.py); empty until detected from
    # the first file with enough text, English meanwhile.
    language = models.CharField(
        max_length=32,
        blank=True,
        default="",
        db_default="",
        help_text="Text search configuration for keyword search: english, german, french, ..., simple.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "source", "external_id"], name="folder_unique_per_owner_source")
        ]
        indexes = [models.Index(fields=["last_synced_at"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.source})"


class FileStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    INDEXING = "indexing", _("Indexing")
    INDEXED = "indexed", _("Indexed")
    SKIPPED = "skipped", _("Skipped")
    FAILED = "failed", _("Failed")


class File(TimestampedModel):
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="files")
    external_id = models.CharField(max_length=1024)
    path = models.CharField(max_length=1024, help_text="Relative to the folder root, e.g. inbox/W2_2024.pdf")
    name = models.CharField(max_length=255)
    mime_type = models.CharField(max_length=255, blank=True)
    size = models.BigIntegerField(default=0)
    checksum = models.CharField(max_length=128, blank=True)
    modified_time = models.DateTimeField(null=True, blank=True)
    preview = models.TextField(blank=True)
    digest = models.TextField(blank=True, help_text="Short summary of the content.")
    embedding = VectorField(dimensions=384, null=True, blank=True)
    search_vector = SearchVectorField(null=True, editable=False)
    status = models.CharField(max_length=16, choices=FileStatus.choices, default=FileStatus.PENDING)
    # The reason in English, and beside it its msgid and parameters, so that a page shows it in its
    # reader's language (apps/core/stored_messages.py); empty for reasons written before them.
    error = models.TextField(blank=True)
    error_i18n = models.JSONField(null=True, blank=True, help_text="error's msgid and parameters.")
    indexed_checksum = models.CharField(max_length=128, blank=True, help_text="Checksum of the indexed content.")
    indexed_at = models.DateTimeField(null=True, blank=True)
    chunk_count = models.PositiveIntegerField(default=0)
    # The keyword search's length of the file as a whole (apps/search/statements.py).
    token_count = models.PositiveIntegerField(default=0, db_default=0, help_text="Tokens in the file's chunks.")
    # What the source needs to read the file again, e.g. the target of a Drive shortcut.
    source_extra = models.JSONField(default=dict, blank=True, db_default=Value({}, output_field=models.JSONField()))
    # Who is indexing the file and since when: a conditional UPDATE claims it (a redelivered task
    # has the same id and takes it back at once; other claims wait until the lease is stale).
    index_claim = models.CharField(max_length=64, blank=True, default="", db_default="")
    index_started_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["folder", "external_id"], name="file_unique_external_id"),
        ]
        indexes = [
            models.Index(fields=["folder", "path"]),
            models.Index(fields=["folder", "status"]),
            models.Index(fields=["folder", "modified_time"]),
            # The files page's sort orders (apps/library/selectors.py `file_list`).
            models.Index(fields=["folder", "size"], name="file_folder_size"),
            models.Index(F("folder"), F("chunk_count"), Collate("path", "C"), name="file_folder_chunks"),
            # The files page's order by path and its directory filter (LIKE 'dir/%'), which an index
            # serves under collation "C" only: the database's own may be another.
            models.Index(F("folder"), Collate("path", "C"), name="file_folder_path_bytes"),
            # Sorting by name in any case; name filters (UPPER(name) LIKE ...) may read it alone.
            models.Index(F("folder"), Upper("name"), name="file_folder_name_upper"),
            models.Index(F("folder"), F("modified_time").desc(nulls_last=True), name="file_folder_modified_desc"),
        ]

    def __str__(self) -> str:
        return self.path


class Chunk(models.Model):
    # Chunks are written in bulk (COPY) and never updated one by one: no timestamps.
    # The table is hash-partitioned by folder (apps/library/chunk_partitions.py): in the database the
    # primary key is (folder_id, id), and a query that names the folder reads one partition.
    file = models.ForeignKey(File, on_delete=models.CASCADE, related_name="chunks")
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="+", db_index=False)
    chunk_index = models.PositiveIntegerField()
    text = models.TextField()
    embedding = VectorField(dimensions=vector_index.DIMENSIONS, null=True)
    search_vector = SearchVectorField(null=True, editable=False)
    location = models.JSONField(default=dict, blank=True)
    token_count = models.PositiveIntegerField(default=0)

    class Meta:
        # A partitioned table's unique keys hold its partition key; a file's chunks share its folder.
        constraints = [models.UniqueConstraint(fields=["folder", "file", "chunk_index"], name="chunk_unique_index")]
        # HNSW, GIN and id btree indexes are built by the partition move (library/0015).

    def __str__(self) -> str:
        return f"{self.file_id}#{self.chunk_index}"


class JobKind(models.TextChoices):
    INDEX_FILE = "index_file", "Index file"
    INDEX_FOLDER = "index_folder", "Index folder"
    SYNC = "sync", "Sync"
    BACKFILL = "backfill", "Backfill"


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class IndexingJob(TimestampedModel):
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="jobs")
    file = models.ForeignKey(File, on_delete=models.CASCADE, related_name="jobs", null=True, blank=True)
    kind = models.CharField(max_length=16, choices=JobKind.choices)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    error_i18n = models.JSONField(null=True, blank=True, help_text="error's msgid and parameters.")
    celery_task_id = models.CharField(max_length=255, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["folder", "status"])]


class SyncLog(TimestampedModel):
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="sync_logs")
    mode = models.CharField(max_length=16, help_text="changes | full")
    added = models.PositiveIntegerField(default=0)
    modified = models.PositiveIntegerField(default=0)
    deleted = models.PositiveIntegerField(default=0)
    moved = models.PositiveIntegerField(default=0)
    api_calls = models.PositiveIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    error_i18n = models.JSONField(null=True, blank=True, help_text="error's msgid and parameters.")

    class Meta:
        # Each folder's newest first: the folders list reads every folder's last sync, one probe each.
        indexes = [models.Index(F("folder"), F("created_at").desc(), F("id").desc(), name="synclog_folder_newest")]

    @property
    def summary(self) -> str:
        return f"+{self.added} ~{self.modified} -{self.deleted}"


class FolderRole(models.TextChoices):
    """Ordered: each role may do everything the ones before it may (see apps/library/access.py)."""

    VIEWER = "viewer", _("Viewer")
    EDITOR = "editor", _("Editor")
    OWNER = "owner", _("Owner")


class FolderMembership(TimestampedModel):
    """A person other than the owner who may use a folder; the owner is `Folder.owner`, never a row."""

    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="folder_memberships")
    role = models.CharField(
        max_length=16, choices=[(FolderRole.VIEWER, "Viewer"), (FolderRole.EDITOR, "Editor")], default="viewer"
    )
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Set while the member's own account cannot open the folder at its source (a Drive folder
    # no longer shared with their Google account): no role here until a sync sees it back.
    source_access_lost_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["folder", "user"], name="folder_membership_unique")]
        indexes = [models.Index(fields=["user", "folder"])]

    def __str__(self) -> str:
        return f"{self.user_id} {self.role} of {self.folder_id}"


class FolderInvitation(TimestampedModel):
    """A link that makes whoever signs in through it a member: single use, expiring. Only a hash
    of its token is stored, so a database read cannot be turned into a way in."""

    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(
        max_length=16, choices=[(FolderRole.VIEWER, "Viewer"), (FolderRole.EDITOR, "Editor")], default="viewer"
    )
    invitee = models.CharField(max_length=254, blank=True, help_text="The email or username it was meant for.")
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    expires_at = models.DateTimeField()
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    accepted_at = models.DateTimeField(null=True, blank=True)

    @property
    def anyone_with_link(self) -> bool:
        """No invitee: the owner chose to let whoever holds the link in (invitation_create)."""
        return not self.invitee

    def __str__(self) -> str:
        return f"invitation to {self.folder_id} for {self.invitee or 'anyone'}"


class UserQuota(models.Model):
    """A user's own limits over the folders they own; an empty field falls back to the setting."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="library_quota")
    folders = models.PositiveIntegerField(null=True, blank=True, help_text="Empty: QUOTA_FOLDERS_PER_USER.")
    files = models.PositiveBigIntegerField(null=True, blank=True, help_text="Empty: QUOTA_FILES_PER_USER.")
    bytes = models.PositiveBigIntegerField(null=True, blank=True, help_text="Empty: QUOTA_BYTES_PER_USER.")
    chunks = models.PositiveBigIntegerField(null=True, blank=True, help_text="Empty: QUOTA_CHUNKS_PER_USER.")

    def __str__(self) -> str:
        return f"quota of user {self.user_id}"

"""Writes that end a file's indexing state, shared by indexing runs and listings."""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.core.stored_messages import stored_message_fields
from apps.library.models import File, FileStatus

# Files that need no work: their current content is indexed, or was judged not indexable.
SETTLED = Q(status__in=[FileStatus.INDEXED, FileStatus.SKIPPED], indexed_checksum=F("checksum"))


def file_settle(
    *, file_id: int, status: str, error: str, checksum: str, token: str | None = None, clear_checksum: bool = False
) -> bool:
    """A file that ends without chunks (skipped or failed): drop old chunks, record why.

    With ``token``, only while that indexing run still holds the file's claim.
    """
    rows = File.objects.filter(pk=file_id)
    if token is not None:
        rows = rows.filter(status=FileStatus.INDEXING, index_claim=token)
    with transaction.atomic():
        updated = rows.update(
            status=status,
            **stored_message_fields("error", error),
            indexed_checksum=checksum,
            indexed_at=timezone.now(),
            chunk_count=0,
            token_count=0,
            preview="",
            digest="",
            embedding=None,
            index_claim="",
            **({"checksum": ""} if clear_checksum else {}),
        )
        if updated:
            with connection.cursor() as cursor:
                cursor.execute("DELETE FROM library_chunk WHERE file_id = %s", [file_id])
    return bool(updated)

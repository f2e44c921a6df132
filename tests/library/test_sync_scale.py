"""A sync that finds nothing changed: bounded statements at any size, nothing read, nothing written
(issue 40 item 4; bench/ops/sync_nochange.py measures it at 100,000 files)."""

import os

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from apps.connectors.local import LocalSource
from apps.library.models import File, FileStatus
from apps.library.reconcile import folder_reconcile
from apps.library.sync import folder_sync
from tests.support.files import write

pytestmark = pytest.mark.django_db

# A modification time with nanoseconds: the stored one keeps microseconds, and a sync must still
# see the file as unchanged.
ODD_MTIME_NS = 1_700_000_000_123_456_789


def _add_indexed(root, folder, *, first, count):
    """``count`` more files, listed and reconciled, then marked indexed as a finished run leaves them."""
    for n in range(first, first + count):
        write(root, f"dir-{n % 3}/sub-{n % 5}/note-{n}.txt", f"note {n} " * (1 + n % 4))
    os.utime(root / "dir-0/sub-0/note-0.txt", ns=(ODD_MTIME_NS, ODD_MTIME_NS))
    source = LocalSource(root)
    folder_reconcile(folder=folder, entries=source.list_entries(), problems=source.problems())
    File.objects.filter(folder=folder).update(status=FileStatus.INDEXED, indexed_checksum=F("checksum"))


def _no_change_sync(folder):
    with CaptureQueriesContext(connection) as queries:
        log = folder_sync(folder_id=folder.pk)
    assert log is not None and (log.added, log.modified, log.deleted, log.moved, log.error) == (0, 0, 0, 0, "")
    return [query["sql"] for query in queries.captured_queries]


def test_a_no_change_sync_sends_the_same_statements_at_any_size_and_reads_no_file(root, folder, monkeypatch):
    _add_indexed(root, folder, first=0, count=20)
    small = _no_change_sync(folder)
    _add_indexed(root, folder, first=20, count=580)
    folder_sync(folder_id=folder.pk)  # the first sync after adding settles the new rows' metadata
    hashed = []
    real = LocalSource._sha256
    monkeypatch.setattr(LocalSource, "_sha256", lambda self, relative: hashed.append(relative) or real(self, relative))
    large = _no_change_sync(folder)
    assert File.objects.filter(folder=folder).count() == 600
    assert len(large) == len(small)
    assert hashed == []  # unchanged size and mtime: no file opened
    # Nothing differs, so no file row is written (a time off by a microsecond would rewrite them all).
    assert not [sql for sql in large if sql.startswith('UPDATE "library_file"')]


def test_a_sync_keeps_the_type_sniffed_from_the_content(root, folder):
    write(root, "notes.txt", "# Heading\n\nA Markdown note saved as .txt")
    write(root, "scan", b"%PDF-1.4\n%binary")
    source = LocalSource(root)
    folder_reconcile(folder=folder, entries=source.list_entries(), problems=source.problems())
    sniffed = dict(File.objects.filter(folder=folder).values_list("path", "mime_type"))
    assert sniffed == {"notes.txt": "text/markdown", "scan": "application/pdf"}
    _no_change_sync(folder)
    _no_change_sync(folder)
    assert dict(File.objects.filter(folder=folder).values_list("path", "mime_type")) == sniffed

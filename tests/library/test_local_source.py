import datetime as dt
import hashlib
import os

import pytest

from apps.connectors.local import KnownFile, LocalSource
from apps.library.sources import SourceEntry, SourceError
from tests.support.files import write


def test_walks_recursively_with_relative_posix_paths_and_sha256(root):
    write(root, "notes/a.md", "# Title\n\nbody")
    write(root, "inbox/W2_2024.txt", "wages")
    write(root, ".git/config", "hidden")
    write(root, "notes/.DS_Store", "hidden")
    source = LocalSource(root)
    entries = {entry.path: entry for entry in source.list_entries()}
    assert set(entries) == {"notes/a.md", "inbox/W2_2024.txt"}
    entry = entries["inbox/W2_2024.txt"]
    assert entry.external_id == "inbox/W2_2024.txt" and entry.name == "W2_2024.txt"
    assert entry.checksum == hashlib.sha256(b"wages").hexdigest()
    assert entry.size == 5 and entry.modified_time.tzinfo is not None
    assert entries["notes/a.md"].mime_type == "text/markdown"
    assert source.problems() == []


def test_sniffs_markdown_and_pdf_without_telling_extensions(root):
    write(root, "README", "# Heading\n\n- item\n")
    write(root, "plain", "just words")
    write(root, "scan.bin", b"%PDF-1.4\n...")
    write(root, "blob", b"\x00\x01\x02")
    mimes = {entry.path: entry.mime_type for entry in LocalSource(root).list_entries()}
    assert mimes == {
        "README": "text/markdown",
        "plain": "text/plain",
        "scan.bin": "application/pdf",
        "blob": "application/octet-stream",
    }


def test_symlinks_leaving_the_root_are_reported_not_followed(root, tmp_path):
    outside = write(tmp_path, "outside/secret.txt", "do not index")
    os.symlink(outside, root / "escape.txt")
    os.symlink(outside.parent, root / "escape_dir")
    os.symlink(root / "missing", root / "broken")
    write(root, "real/inner.txt", "inner")
    os.symlink(root / "real", root / "loop")
    os.symlink(root / "real/inner.txt", root / "alias.txt")
    source = LocalSource(root)
    paths = sorted(entry.path for entry in source.list_entries())
    assert paths == ["alias.txt", "real/inner.txt"]
    reasons = {problem.path: problem.reason for problem in source.problems()}
    assert "outside the folder" in reasons["escape.txt"]
    assert "outside the folder" in reasons["escape_dir"]
    assert "broken" in reasons["broken"]
    assert "directory" in reasons["loop"]


def test_unreadable_files_and_special_files_are_reported(root, monkeypatch):
    write(root, "ok.txt", "fine")
    write(root, "locked.txt", "secret")
    os.mkfifo(root / "pipe")
    real = LocalSource._sha256

    def sha256(self, relative):
        if relative == "locked.txt":
            raise PermissionError(13, "Permission denied")
        return real(self, relative)

    monkeypatch.setattr(LocalSource, "_sha256", sha256)
    source = LocalSource(root)
    assert [entry.path for entry in source.list_entries()] == ["ok.txt"]
    reasons = {problem.path: problem.reason for problem in source.problems()}
    assert reasons == {"locked.txt": "unreadable: Permission denied", "pipe": "not a regular file"}


def test_known_size_and_mtime_reuse_the_stored_checksum(root):
    write(root, "a.txt", "alpha")
    entry = next(LocalSource(root).list_entries())
    known = {"a.txt": KnownFile(size=entry.size, modified_time=entry.modified_time, checksum="stored")}
    assert next(LocalSource(root, known=known).list_entries()).checksum == "stored"


def test_oversized_files_are_not_read(root, settings):
    settings.INDEX_MAX_FILE_BYTES = 3
    write(root, "big.txt", "0123456789")
    assert next(LocalSource(root).list_entries()).checksum.startswith("stat:10:")


def test_move_renames_inside_the_root_only(root, tmp_path):
    write(root, "inbox/invoice.txt", "INV-20931")
    write(root, "finance/existing.txt", "x")
    source = LocalSource(root)
    entry = next(e for e in source.list_entries() if e.path == "inbox/invoice.txt")
    moved = source.move(entry, "finance/2024/invoice.txt")
    assert moved.path == moved.external_id == "finance/2024/invoice.txt" and moved.checksum == entry.checksum
    assert (root / "finance/2024/invoice.txt").read_text() == "INV-20931"
    assert not (root / "inbox/invoice.txt").exists()
    for target in ["../outside.txt", "/etc/passwd", "finance/existing.txt", "a/../../x.txt"]:
        with pytest.raises(SourceError):
            source.move(moved, target)
    os.symlink(tmp_path, root / "out")
    with pytest.raises(SourceError):
        source.move(moved, "out/escaped.txt")
    assert (root / "finance/2024/invoice.txt").exists()


def test_reading_refuses_paths_outside_the_root(root, tmp_path):
    write(tmp_path, "secret.txt", "s")
    fake = SourceEntry("../secret.txt", "../secret.txt", "secret.txt", "text/plain", 1, "", dt.datetime.now(dt.UTC))
    with pytest.raises(SourceError):
        LocalSource(root).read_bytes(fake)

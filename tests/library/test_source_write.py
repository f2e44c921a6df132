"""A local folder's source writes a file whole (new or replaced), and never through a symlink or
outside the root."""

from __future__ import annotations

import os

import pytest

from apps.connectors.local import LocalSource
from apps.library.sources import SourceError


def test_write_creates_then_replaces_and_returns_the_entry(root) -> None:
    source = LocalSource(root)

    created = source.overwrite("notes/guideline.md", b"- Receipts go to `finance/`.\n", mime_type="text/markdown")
    replaced = source.overwrite("notes/guideline.md", b"- Payslips go to `work/`.\n", mime_type="text/markdown")

    assert (root / "notes" / "guideline.md").read_bytes() == b"- Payslips go to `work/`.\n"
    assert (created.path, created.name, created.size) == ("notes/guideline.md", "guideline.md", 29)
    assert replaced.checksum != created.checksum and replaced.size == 26
    assert sorted(os.listdir(root / "notes")) == ["guideline.md"]  # no temporary file left behind


@pytest.mark.parametrize("path", ["../outside.md", "/etc/passwd", "a/../../b.md"])
def test_a_path_outside_the_root_is_refused(root, path) -> None:
    with pytest.raises(SourceError):
        LocalSource(root).overwrite(path, b"x", mime_type="text/plain")
    assert not (root.parent / "outside.md").exists()


def test_a_symlink_is_not_written_through(root, tmp_path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("keep me")
    (root / "inside.md").write_text("keep me too")
    (root / "guideline.md").symlink_to(outside)
    (root / "notes.md").symlink_to(root / "inside.md")
    source = LocalSource(root)

    with pytest.raises(SourceError, match="leads outside the folder"):
        source.overwrite("guideline.md", b"overwritten", mime_type="text/markdown")
    with pytest.raises(SourceError, match="not a regular file"):
        source.overwrite("notes.md", b"overwritten", mime_type="text/markdown")

    assert outside.read_text() == "keep me" and (root / "inside.md").read_text() == "keep me too"

"""Writing test files into a folder on disk."""

from __future__ import annotations

import os
from pathlib import Path


def write(root: Path, relative: str, content: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def swap_for_symlink_after_check(monkeypatch, *, directory: Path, outside: Path) -> None:
    """Once the source has resolved and checked a path under `directory`, replace `directory`
    with a symlink to `outside`: the race between checking a path and opening it, made certain.
    The checks resolve with os.path.realpath, so the swap runs right after the first such call."""
    real = os.path.realpath
    done = []

    def realpath(path, *args, **kwargs):
        resolved = real(path, *args, **kwargs)
        if not done and Path(resolved).is_relative_to(directory):
            done.append(True)
            directory.rename(directory.with_name(directory.name + ".before"))
            directory.symlink_to(outside, target_is_directory=True)
        return resolved

    monkeypatch.setattr(os.path, "realpath", realpath)

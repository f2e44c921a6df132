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


def swap_for_symlink_before_open(monkeypatch, *, root: Path, directory: Path, outside: Path, at_open: int = 1) -> None:
    """Replace `directory` with a symlink to `outside` just before the `at_open`th opening of a path
    under `root` (by `os.open`, `os.scandir` or `open`): whatever the code checked before, the race
    between that check and the open, made certain. The directory moves to a hidden name."""
    opens = []

    def swap_first(call):
        def opened(path, *args, **kwargs):
            if isinstance(path, str | os.PathLike) and Path(path).is_relative_to(root) and len(opens) < at_open:
                opens.append(path)
                if len(opens) == at_open:
                    directory.rename(directory.with_name(f".{directory.name}.before"))
                    directory.symlink_to(outside, target_is_directory=True)
            return call(path, *args, **kwargs)

        return opened

    monkeypatch.setattr(os, "open", swap_first(os.open))
    monkeypatch.setattr(os, "scandir", swap_first(os.scandir))
    monkeypatch.setattr("builtins.open", swap_first(open))

"""German text as people write it: Debian's German manual pages (package manpages-de, installed by
`make test` through `make german-docs`), rendered by man as a reader sees them."""

from __future__ import annotations

import subprocess
from pathlib import Path

GERMAN_MAN_DIR = Path("/usr/share/man/de/man1")


def german_manual_page(name: str) -> str:
    page = GERMAN_MAN_DIR / f"{name}.1.gz"
    if not page.is_file():
        raise FileNotFoundError(f"{page} is missing: install Debian's manpages-de (make german-docs)")
    rendered = subprocess.run(
        ["man", "-l", str(page)],
        capture_output=True,
        text=True,
        check=True,
        env={"MANWIDTH": "80", "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"},
    )
    return rendered.stdout

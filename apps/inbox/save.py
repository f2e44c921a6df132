"""The save intent: pasted text or a link becomes a note in the folder's inbox/ (seed 002).

Only local folders can be written here (the Drive source has no create call yet). The note is
picked up by a sync, indexed, and then gets its own organization suggestion like any new file.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.utils import timezone

from apps.core.api import ApplicationError, ConflictError
from apps.library.models import Folder, SourceKind
from apps.library.services import folder_sync_enqueue
from apps.organize.paths import INBOX

MAX_NAME_ATTEMPTS = 100


def inbox_note_save(*, folder: Folder, text: str, url: str | None = None) -> str:
    """Write the note and queue a sync; returns its path relative to the folder root."""
    if folder.source != SourceKind.LOCAL:
        raise ApplicationError("Saving pasted text works for local folders only, for now.")
    root = Path(os.path.realpath(folder.external_id))
    inbox = root / INBOX.rstrip("/")
    inbox.mkdir(exist_ok=True)
    if not Path(os.path.realpath(inbox)).is_relative_to(root):
        raise ApplicationError("inbox/ leads outside the folder; nothing was saved.")
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    kind, body = ("link", f"# Saved link\n\n<{url}>\n") if url else ("note", text.strip() + "\n")
    for attempt in range(MAX_NAME_ATTEMPTS):
        name = f"{kind}-{stamp}{f'-{attempt}' if attempt else ''}.md"
        try:
            # "x": never overwrite, and never follow a symbolic link planted under that name.
            with open(inbox / name, "x", encoding="utf-8") as handle:
                handle.write(body)
        except FileExistsError:
            continue
        folder_sync_enqueue(folder=folder)
        return f"{INBOX}{name}"
    raise ConflictError("inbox/ has no free name for the note; nothing was saved.")

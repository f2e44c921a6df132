"""From Drive metadata to ``SourceEntry``: tree walks, paths, shortcuts, unsupported types."""

from __future__ import annotations

import datetime as dt
from collections import deque
from collections.abc import Iterator
from typing import Any

from django.utils.translation import gettext_noop

from apps.connectors.drive import mimes
from apps.connectors.drive.api import DriveApi
from apps.core.stored_messages import StoredMessage
from apps.library.sources import SourceEntry, SourceNotFoundError, SourceProblem

SHORTCUT_TARGET = "shortcut_target_id"
# The file's page in Drive's web UI (a shortcut: its target's), linked from the document page.
WEB_VIEW_LINK = "web_view_link"


def path_component(name: str) -> str:
    """Drive allows "/" in names; inside a path it would invent a folder level."""
    return name.replace("/", "_")


def join_path(parent: str, name: str) -> str:
    return f"{parent}/{path_component(name)}" if parent else path_component(name)


def walk(
    api: DriveApi,
    *,
    folder_id: str,
    path: str,
    drive_id: str | None,
    trashed: bool | None = False,
    folders_per_query: int,
) -> Iterator[tuple[dict[str, Any], str]]:
    """(metadata, path) of every non-folder under ``folder_id``, breadth first.

    Sibling folders are listed together (``'a' in parents or 'b' in parents``), so a tree of
    many small folders costs far fewer calls than one listing per folder.
    """
    pending: deque[tuple[str, str]] = deque([(folder_id, path)])
    while pending:
        batch = dict(pending.popleft() for _ in range(min(folders_per_query, len(pending))))
        for meta in api.children(list(batch), drive_id=drive_id, trashed=trashed):
            parent_id = next((parent for parent in meta.get("parents", []) if parent in batch), None)
            if parent_id is None:
                continue
            child_path = join_path(batch[parent_id], meta["name"])
            if meta["mimeType"] == mimes.FOLDER:
                pending.append((meta["id"], child_path))
            else:
                yield meta, child_path


class EntryBuilder:
    """Builds entries, resolving shortcuts to their targets; what cannot be indexed becomes a problem."""

    def __init__(self, api: DriveApi, problems: list[SourceProblem]) -> None:
        self._api = api
        self._problems = problems

    def build(self, meta: dict[str, Any], path: str) -> SourceEntry | None:
        content_meta, extra = meta, dict[str, str]()
        if meta["mimeType"] == mimes.SHORTCUT:
            target = self._shortcut_target(meta, path)
            if target is None:
                return None
            content_meta, extra = target, {SHORTCUT_TARGET: target["id"]}
        if content_meta.get("webViewLink"):
            extra[WEB_VIEW_LINK] = content_meta["webViewLink"]
        mime_type = content_meta["mimeType"]
        if mimes.is_google_native(mime_type) and mime_type not in mimes.EXPORT_FORMATS:
            kind = mime_type.removeprefix(mimes.GOOGLE_APPS_PREFIX)
            self._problems.append(
                SourceProblem(
                    path=path,
                    reason=StoredMessage(gettext_noop("Google %(kind)s files have no text export"), kind=kind),
                )
            )
            return None
        return SourceEntry(
            external_id=meta["id"],
            path=path,
            name=meta["name"],
            mime_type=mime_type,
            size=int(content_meta.get("size", 0)),
            # Google-native files have no md5; their version bumps on every change instead.
            checksum=content_meta.get("md5Checksum") or f"v{content_meta.get('version', 0)}",
            modified_time=dt.datetime.fromisoformat(content_meta["modifiedTime"]),
            extra=extra,
        )

    def _shortcut_target(self, meta: dict[str, Any], path: str) -> dict[str, Any] | None:
        details = meta.get("shortcutDetails", {})
        if details.get("targetMimeType") == mimes.FOLDER:
            # Following folder shortcuts could loop and would list files twice.
            self._problems.append(
                SourceProblem(path=path, reason=StoredMessage(gettext_noop("shortcuts to folders are not followed")))
            )
            return None
        try:
            target = self._api.get(details.get("targetId", ""))
        except SourceNotFoundError:
            target = None
        if target is None or target.get("trashed"):
            reason = StoredMessage(gettext_noop("the shortcut's target is gone or in the trash"))
            self._problems.append(SourceProblem(path=path, reason=reason))
            return None
        return target

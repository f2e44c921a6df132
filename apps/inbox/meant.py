"""What an organize message means: which files ("the lease", "it", "them", or the whole inbox),
whether the user's own words named them, and the destination named ("my work folder")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from apps.chat.models import Conversation
from apps.core.api import ApplicationError
from apps.inbox.router import Route
from apps.inbox.selectors import inbox_files, inbox_files_without_suggestion, last_shown_file_ids
from apps.library.selectors import (
    folder_file_get_by_path,
    folder_files_get,
    folder_files_get_by_path,
    folder_files_named,
)
from apps.organize.paths import folder_path_clean, in_inbox
from apps.organize.terms import name_terms, organize_terms
from apps.organize.tree import folder_tree

# "Organize my inbox" takes this many waiting files at most, a batch per organize turn.
ORGANIZE_MAX_FILES = 1000
# "Move it" means the file just shown (the first card); "move them", all of them.
_REFERS_TO_ONE = re.compile(r"\b(it|this|that|the (file|one))\b", re.IGNORECASE)
_REFERS_TO_ALL = re.compile(r"\b(them|these|those|the (files|ones))\b", re.IGNORECASE)
_HINT_NOISE = re.compile(r"\b(my|the|a|folder|directory|dir)\b", re.IGNORECASE)
# A file spelled out as a name with an extension ("budget-2025.md") or a path ("finance/budget-2025.md").
_SPELLED_FILE = re.compile(r"(?<![\w./-])(\w[\w./-]+\.[A-Za-z0-9]{1,8})(?![\w-])")


def paths_meant(
    *,
    conversation: Conversation,
    before_message_id: int,
    text: str,
    route: Route,
    file_ids: Sequence[int] | None,
    target: str | None,
) -> tuple[list[str], bool]:
    """The files a message means: handed over, named, referred back to, or the whole inbox; and
    whether the user's own words named them (a destination said for them is an instruction)."""
    folder_id = conversation.live_folder_id
    if file_ids:
        # Handed over by the query agent: its reading of the request, which the organize agent
        # turns into suggestions for the user to confirm.
        by_id = folder_files_get(folder_id=folder_id, file_ids=file_ids)
        return [by_id[pk].path for pk in file_ids if pk in by_id], False
    named_path = route.params.get("file_path")
    if named_path and folder_file_get_by_path(folder_id=folder_id, path=named_path) is not None:
        return [named_path], True
    spelled = _spelled_files(folder_id=folder_id, text=text, target=target)
    if spelled:
        return spelled, True
    waiting = inbox_files(folder_id=folder_id, limit=ORGANIZE_MAX_FILES)
    words = set(organize_terms(text)) - set(organize_terms(target or ""))
    named = [file.path for file in waiting if words & set(name_terms(file.name))]
    if named:
        return named, True
    every, one = _REFERS_TO_ALL.search(text), _REFERS_TO_ONE.search(text)
    if every or one:
        shown = last_shown_file_ids(conversation_id=conversation.pk, before_message_id=before_message_id)
        shown_files = folder_files_get(folder_id=folder_id, file_ids=shown)
        meant = [shown_files[pk].path for pk in shown if pk in shown_files]
        if meant:
            return (meant if every else meant[:1]), True
    unsuggested = set(inbox_files_without_suggestion(folder_ids=[folder_id]).values_list("pk", flat=True))
    return [file.path for file in waiting if file.pk in unsuggested], False


def _spelled_files(*, folder_id: int, text: str, target: str | None) -> list[str]:
    """The files a message spells out, wherever they are: "move finance/budget-2025.md to finance"
    means that file, not the inbox. A name found nowhere is kept when a destination was said, so
    the answer says it was not found rather than organizing other files."""
    words = dict.fromkeys(match.group(1).strip("./") for match in _SPELLED_FILE.finditer(text))
    spelled = [word for word in words if word != (target or "").rstrip("/")]  # "to v2.0" is the folder
    if not spelled:
        return []
    by_path = folder_files_get_by_path(folder_id=folder_id, paths=spelled)
    named = folder_files_named(folder_id=folder_id, names=[name for name in spelled if "/" not in name])
    paths: list[str] = []
    for word in spelled:
        if word in by_path:
            paths.append(word)
            continue
        same_name = [file.path for file in named if file.name == word]
        # The same name in several places: the copy waiting in the inbox is the one meant.
        paths += [path for path in same_name if in_inbox(path)][:1] or same_name
        if not same_name and target:
            paths.append(word)
    return list(dict.fromkeys(paths))


def target_of(route: Route, *, folder_id: int) -> str | None:
    """The destination the user named ("my work folder", "taxes/2024"), as a folder path."""
    hint = route.params.get("target_folder") or route.params.get("target_hint") or ""
    hint = " ".join(_HINT_NOISE.sub(" ", hint).split()).strip(" ./")
    if not hint:
        return None
    folders = [node.path for node in folder_tree(folder_id=folder_id)]
    lowered = hint.lower()
    for path in folders:
        if path.rstrip("/").lower() == lowered or path.rstrip("/").rsplit("/", 1)[-1].lower() == lowered:
            return path
    try:
        return folder_path_clean(hint)
    except ApplicationError:
        return None

"""The user's word wins: "move X to Y" is carried out, or refused for a reason a person understands.

What learning inferred (a folder declined for a file like this one) shapes the assistant's own
suggestions, never an instruction. Refusals are about the world, in the user's terms: there is no
such folder, the file is already there, the place is taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from apps.chat.models import Conversation, Message
from apps.core.api import ApplicationError
from apps.library.models import Folder
from apps.library.selectors import folder_files_get_by_path
from apps.organize.paths import INBOX, is_under, parent_folder
from apps.organize.services import file_move_as_told
from apps.organize.tree import folder_tree, target_folders

# Deep enough for any folder a user names; the tree is one grouped query either way.
TREE_DEPTH = 32
FOLDERS_NAMED = 8


@dataclass
class ToldOutcome:
    lines: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)  # the moves' action_result messages
    moved: int = 0


def moves_as_told(
    *, folder: Folder, paths: Sequence[str], target: str, conversation: Conversation, run_id: str
) -> ToldOutcome:
    """Move each file at `paths` into `target`, as the user said; what could not be done, and why."""
    outcome = ToldOutcome()
    existing = target_folders(folder_tree(folder_id=folder.pk, depth=TREE_DEPTH))
    if is_under(target, INBOX):
        outcome.lines.append(f"{target} is the inbox, where files wait to be sorted; tell me a folder to move to.")
        return outcome
    if target not in existing:
        named = ", ".join(existing[:FOLDERS_NAMED]) or "none yet"
        outcome.lines.append(
            f"There is no folder {target} in {folder.name}, so nothing was moved. Folders you have: {named}."
        )
        return outcome
    files = folder_files_get_by_path(folder_id=folder.pk, paths=paths)
    for path in paths:
        file = files.get(path)
        if file is None:
            outcome.lines.append(f"I could not find {path}; was it moved or deleted?")
            continue
        if parent_folder(file.path) == target:
            outcome.lines.append(f"{file.path} is already in {target}.")
            continue
        try:
            result = file_move_as_told(file=file, target=target, conversation=conversation, run_id=run_id)
        except ApplicationError as exc:
            outcome.lines.append(f"I could not move {file.path}: {exc.message}")
            continue
        assert result.move is not None and result.message is not None  # accepting always moves and says so
        outcome.moved += 1
        outcome.messages.append(result.message)
    return outcome


def told_text(outcome: ToldOutcome) -> str:
    """The reply: each move is shown by its own message ("Moved … to …", with Undo), so the reply
    counts them and says only what could not be done."""
    if outcome.moved:
        done = f"Done: moved {outcome.moved} file{'' if outcome.moved == 1 else 's'}."
        return "\n".join([done, *(f"- {line}" for line in outcome.lines)])
    return " ".join(outcome.lines) or "Nothing to move."

"""What one inbox run's agents share: the reply, the file cards, a handoff, what they created.

Tools are closures over an `InboxRunState`; they run in the loop's worker threads, so every
write goes through the lock. `respond_to_user` and `handoff_to_organize` end an agent's loop.
The reply is respond_to_user's `message`, the tool's answer argument: it streams to the user as
the model writes the call, and the loop ends with it once the call succeeds. A handoff has no
text of its own: its tool ends the loop with a fixed line (`ends_loop_with`) once it went through,
without another (paid) model call, and the organize agent answers.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from apps.chat.agent.registry import NOT_FOUND, Tool, ToolContext, ToolInput, ToolOutput, pydantic_tool
from apps.chat.models import Conversation
from apps.library.models import File, Folder
from apps.library.selectors import folder_files_get, folder_files_get_by_path
from apps.organize.paths import parent_folder

MAX_CARDS = 20


@dataclass(frozen=True)
class FileCard:
    file_id: int
    path: str
    name: str
    relevance: float | None = None
    context: str = ""
    state: str = ""  # where an inbox file stands ("Suggested: taxes/ (93% sure)"), for inbox listings

    def as_result(self, *, folder: Folder) -> dict[str, Any]:
        """One `search_result` entry (seed 002), plus what a card shows: which folder the file is in,
        where in it, and the ids that open it."""
        return {
            "path": self.path,
            "relevance": self.relevance,
            "matchContext": self.context,
            "fileId": self.file_id,
            "fileName": self.name,
            "folderId": folder.pk,
            "folderName": folder.name,
            "location": parent_folder(self.path) or "/",
            **({"state": self.state} if self.state else {}),
        }


@dataclass(frozen=True)
class Reply:
    message: str
    cards: tuple[FileCard, ...] = ()


@dataclass(frozen=True)
class Handoff:
    file_ids: tuple[int, ...]
    target: str | None
    reason: str


@dataclass
class InboxRunState:
    conversation: Conversation
    user_id: int
    run_id: str
    min_confidence: float = 0.0  # the owner's suggest threshold, for suggestions nobody asked for
    told_target: str | None = None  # the folder the user named for the files of this run
    lock: threading.Lock = field(default_factory=threading.Lock)
    search_query: str = ""
    found: dict[int, FileCard] = field(default_factory=dict)  # by file id, in the order found
    reply: Reply | None = None
    handoff: Handoff | None = None
    suggestion_ids: list[int] = field(default_factory=list)
    action_message_ids: list[int] = field(default_factory=list)  # what execute_move reported
    summaries: list[dict[str, Any]] = field(default_factory=list)  # the summarize tool's, with their files

    @property
    def folder_id(self) -> int:
        return self.conversation.live_folder_id

    def record_search(self, query: str, cards: Sequence[FileCard]) -> None:
        with self.lock:
            self.search_query = query
            for card in cards:
                self.found.setdefault(card.file_id, card)

    def record_summaries(self, summaries: Sequence[dict[str, Any]]) -> None:
        with self.lock:
            self.summaries.extend(summaries)

    def summary_content(self) -> dict[str, Any] | None:
        """The `summary` message's content: the text, and the files it summarises as its sources."""
        with self.lock:
            if not self.summaries:
                return None
            one = len(self.summaries) == 1
            text = "\n\n".join(
                item["summary"] if one else f"{item['path']}: {item['summary']}" for item in self.summaries
            )
            sources = [{key: item[key] for key in ("fileId", "path", "fileName", "method")} for item in self.summaries]
        return {"summary": text, "sources": sources}

    def finish(self, reply: Reply | None = None, handoff: Handoff | None = None) -> None:
        with self.lock:
            self.reply = reply or self.reply
            self.handoff = handoff or self.handoff

    def card(self, file: File) -> FileCard:
        with self.lock:
            known = self.found.get(file.pk)
        return known or FileCard(file_id=file.pk, path=file.path, name=file.name)


# -- tools both agents have ---------------------------------------------------------------------


class RespondInput(ToolInput):
    message: str = Field(min_length=1, max_length=4000, description="Your reply to the user, in plain words.")
    files: list[int | str] = Field(
        default_factory=list,
        max_length=MAX_CARDS,
        description="Files to show as cards: file_ids or paths from earlier results.",
    )


def files_resolve(*, folder_id: int, refs: Sequence[int | str]) -> tuple[list[File], list[str]]:
    """Files of this folder named by id or path, in the order given; and the refs that name none."""
    ids = [int(ref) for ref in refs if isinstance(ref, int) or str(ref).isdigit()]
    paths = [ref for ref in refs if isinstance(ref, str) and not ref.isdigit()]
    by_id = folder_files_get(folder_id=folder_id, file_ids=ids)
    by_path = folder_files_get_by_path(folder_id=folder_id, paths=paths)
    found: list[File] = []
    missing: list[str] = []
    for ref in refs:
        file = by_id.get(int(ref)) if isinstance(ref, int) or str(ref).isdigit() else by_path.get(str(ref))
        if file is None:
            missing.append(str(ref))
        elif file not in found:
            found.append(file)
    return found, missing


def respond_tool(state: InboxRunState) -> Tool:
    def respond_to_user(arguments: RespondInput, context: ToolContext) -> ToolOutput:
        files, missing = files_resolve(folder_id=context.folder_id, refs=arguments.files)
        if missing:
            return ToolOutput.error(f"{NOT_FOUND}: {', '.join(missing)}", hint="use file_ids or paths from results")
        state.finish(reply=Reply(message=arguments.message, cards=tuple(state.card(file) for file in files)))
        return ToolOutput(data={"delivered": True, "files": len(files)}, summary=f"replied with {len(files)} files")

    return pydantic_tool(
        name="respond_to_user",
        description=(
            "Send your final reply to the user, with files to show as cards. Call it once, when you "
            "have the answer; it ends your turn."
        ),
        input_model=RespondInput,
        run=respond_to_user,
        phase="responding",
        answer_argument="message",
    )

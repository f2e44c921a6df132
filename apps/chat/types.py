"""Values shared by every run mode: what a runner returns and how a citation is shown."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from apps.llm.types import Usage

if TYPE_CHECKING:
    from apps.chat.events import RunEvents
    from apps.chat.models import AgentRun


@dataclass(frozen=True)
class Citation:
    """What one `[n]` in an answer points at; stored in the message's `content.citations`.

    A passage of a folder's file, or an image attached to the question (`attachment_id`; no file)."""

    n: int
    file_id: int | None
    file_name: str
    path: str
    location: str
    chunk_id: int | None = None
    snippet: str = ""
    attachment_id: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """A file's passage keeps the shape it always had: no `attachment_id`."""
        fields = asdict(self)
        if self.attachment_id is None:
            del fields["attachment_id"]
        return fields


@dataclass(frozen=True)
class RunResult:
    """A finished answer; `run_execute` persists it and publishes `message` and `done`."""

    text: str
    citations: tuple[Citation, ...]
    model: str
    usage: Usage = field(default_factory=Usage)
    metrics: dict[str, Any] = field(default_factory=dict)
    iterations: int = 0
    tool_calls: tuple[dict[str, Any], ...] = ()
    fallback_reason: str = ""  # a fixed sentence (`apps.llm.failures.REASONS`), never an exception's text
    notice: str = ""  # shown above the answer: the model was unavailable and the offline answerer answered
    truncated: bool = False  # the model stopped at its token limit; the answer can be continued
    sources_consulted: tuple[Citation, ...] = ()  # passages an answer citing none of them was written from
    continues_message_id: int | None = None  # a continuation: the answer message it completes
    # A clarifying question's answers, offered as buttons: the answer is then one `clarification` message.
    options: tuple[str, ...] = ()


class Runner(Protocol):
    def __call__(self, *, run: AgentRun, events: RunEvents) -> RunResult: ...

"""What a research loop ends with: its limits, the outcome it answered with, or the fallback it asks for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.conf import settings

from apps.chat.agent.context import AgentContext, NumberedPassage
from apps.chat.types import Citation
from apps.llm.failures import FailureKind
from apps.llm.types import Usage


class Finish(StrEnum):
    ANSWERED = "answered"  # the model stopped calling tools and answered
    ITERATION_LIMIT = "iteration_limit"  # answer forced after the last allowed turn
    EMPTY_ANSWER = "empty_answer"  # the model stopped with no text; answer forced
    TIMEOUT = "timeout"  # research ran out of time; answer forced (offline if the model is too slow)
    ANSWER_REQUESTED = "answer_requested"  # generate_answer called without its text: written from the gathered


@dataclass(frozen=True)
class AgentLimits:
    max_iterations: int = 3
    total_timeout_seconds: float = 15.0
    tool_timeout_seconds: float = 15.0
    context_max_tokens: int = 8000
    max_calls_per_turn: int = 8
    # The end of the total timeout kept for writing the answer from what was gathered.
    answer_reserve_seconds: float = 4.0

    @classmethod
    def from_settings(cls, *, max_iterations: int | None = None) -> AgentLimits:
        """`max_iterations`: a request's own limit, capped by the setting (which may have been
        lowered since the run was queued)."""
        return cls(
            max_iterations=min(max_iterations or settings.AGENT_MAX_ITERATIONS, settings.AGENT_MAX_ITERATIONS),
            total_timeout_seconds=settings.AGENT_TOTAL_TIMEOUT_SECONDS,
            tool_timeout_seconds=settings.AGENT_TOOL_TIMEOUT_SECONDS,
            context_max_tokens=settings.AGENT_CONTEXT_MAX_TOKENS,
            answer_reserve_seconds=settings.AGENT_ANSWER_RESERVE_SECONDS,
        )

    @property
    def research_seconds(self) -> float:
        """How long tool rounds may go on; at most half the total is kept back for the answer."""
        return self.total_timeout_seconds - min(self.answer_reserve_seconds, self.total_timeout_seconds / 2)


@dataclass(frozen=True)
class AgentProgress:
    """What a loop did, answered or not: stored on the run either way."""

    iterations: int
    tool_calls: tuple[dict[str, Any], ...]
    metrics: dict[str, Any]
    usage: Usage


@dataclass(frozen=True)
class AgentOutcome:
    text: str
    citations: tuple[Citation, ...]
    model: str
    finish: Finish
    progress: AgentProgress
    context: AgentContext
    truncated: bool = False  # the answer stopped at the model's token limit


class AgentFallbackError(Exception):
    """`reason` is a plain sentence a user may read; `model_failure` is set when the model itself
    failed, so the answer must come offline, without calling that provider again in the run."""

    def __init__(
        self,
        reason: str,
        *,
        progress: AgentProgress,
        passages: Sequence[NumberedPassage] = (),
        model_failure: FailureKind | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.progress = progress
        self.passages = tuple(passages)  # what the loop gathered, each chunk once, in number order
        self.model_failure = model_failure


def progress_attach(error: BaseException, progress: AgentProgress) -> None:
    """Let a failure that ends the run carry what the loop did, so the failed run keeps its metrics."""
    error.agent_progress = progress  # type: ignore[attr-defined]


def progress_of(error: BaseException) -> AgentProgress | None:
    progress = getattr(error, "agent_progress", None)
    return progress if isinstance(progress, AgentProgress) else None

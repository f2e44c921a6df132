"""The one message / tool-call representation every provider speaks.

Chat and agent code build these and never see a vendor format; each adapter translates at its edge.
Sequences are tuples so a frozen value stays frozen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class StopReason(StrEnum):
    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: Mapping[str, Any]  # JSON schema of the arguments object
    # A string argument that is the user-facing answer (an inbox reply's `message`): streaming
    # providers forward its text as the model writes it, as `TextDelta`s carrying the call's id.
    answer_argument: str = ""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class ImagePart:
    """An image sent to a vision model with a user message: its bytes and media type (image/png)."""

    media_type: str
    data: bytes


@dataclass(frozen=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False
    images: tuple[ImagePart, ...] = ()

    def __post_init__(self) -> None:
        # Both vendors reject these shapes; failing here points at the caller, not at a 400.
        if self.tool_calls and self.role is not Role.ASSISTANT:
            raise ValueError("only assistant messages carry tool calls")
        if self.images and self.role is not Role.USER:
            raise ValueError("only user messages carry images")
        if (self.role is Role.TOOL) != (self.tool_call_id is not None):
            raise ValueError("tool messages, and only they, need a tool_call_id")

    @classmethod
    def system(cls, content: str) -> Message:
        return cls(role=Role.SYSTEM, content=content)

    @classmethod
    def user(cls, content: str) -> Message:
        return cls(role=Role.USER, content=content)

    @classmethod
    def assistant(cls, content: str = "", *, tool_calls: tuple[ToolCall, ...] = ()) -> Message:
        return cls(role=Role.ASSISTANT, content=content, tool_calls=tool_calls)

    @classmethod
    def tool_result(cls, *, tool_call_id: str, content: str, is_error: bool = False) -> Message:
        return cls(role=Role.TOOL, content=content, tool_call_id=tool_call_id, is_error=is_error)


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    # Of input_tokens, those written to / read from the provider's prompt cache (Anthropic bills
    # a write at 1.25 times the input price and a read at 0.1 times).
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    # Counted by the characters rule (`apps.llm.network.estimated_usage`): the server reported none.
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            estimated=self.estimated or other.estimated,
        )

    def as_metrics(self) -> dict[str, int]:
        """The run metrics' `tokens`: input and output, and the cache's share when there was one."""
        tokens = {"input": self.input_tokens, "output": self.output_tokens}
        if self.cache_write_tokens or self.cache_read_tokens:
            tokens |= {"cache_write": self.cache_write_tokens, "cache_read": self.cache_read_tokens}
        return tokens


@dataclass(frozen=True)
class CitedSource:
    """What an `[n]` in an answer points at, when the provider itself numbered the sources.

    Only the extractive provider fills these (from tool results it gathered); a real model cites
    the numbers the caller gave it, so the caller already holds that mapping.
    """

    n: int
    file_id: str
    file_name: str
    path: str
    location: str
    text: str
    block_id: str = ""  # chunk or block id from the tool result, when it had one


@dataclass(frozen=True)
class LLMResponse:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: StopReason = StopReason.END_TURN
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    citation_sources: tuple[CitedSource, ...] = ()

    def as_message(self) -> Message:
        """The assistant turn to append to the history before sending tool results back."""
        return Message.assistant(self.text, tool_calls=self.tool_calls)


@dataclass(frozen=True)
class TextDelta:
    text: str
    call_id: str = ""  # set when the text is a tool call's answer argument, not the turn's own text


TextCallback = Callable[[TextDelta], None]


@dataclass(frozen=True)
class LLMRequest:
    """One `complete()` call as a value: what the scripted provider records for asserts."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    system: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    stream: bool = False
    json_schema: Mapping[str, Any] | None = None

"""What the two network providers share: the request as the APIs agree on it, and one `complete()`.

A `Turn` is one `complete()` call before any wire format: the conversation, one system prompt, the
tools by their `tool_schema`, the limits. `NetworkProvider.complete` builds it, then meters the
call (`metered_call`), retries it (`call_with_retry`, the SDK's own retries off), maps the SDK's
errors and estimates the usage a server did not report; each adapter (`OpenAIProvider`,
`AnthropicProvider`) only writes its wire format in `_send`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Required, TypedDict

from apps.llm.base import Breaker, LLMError, RetryPolicy, StreamGuard, call_with_retry
from apps.llm.types import LLMResponse, Message, Role, TextCallback, ToolSpec, Usage
from apps.llm.usage import metered_call

# For a server that reports no usage: about four characters a token in English, the estimate the
# chat's history and context budgets use too. An estimate is marked, never passed off as a count.
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Turn:
    messages: tuple[Message, ...]  # the conversation; its system messages are in `system`
    system: str
    tools: tuple[ToolSpec, ...]
    max_tokens: int
    temperature: float
    json_schema: Mapping[str, Any] | None
    stream: bool


def system_text(*, system: str | None, messages: Sequence[Message]) -> str:
    """The system parameter and any system messages, joined into the one prompt ahead of the
    conversation: Anthropic takes it only as a parameter, and many local chat templates refuse a
    system turn anywhere but first."""
    parts = [system or "", *(message.content for message in messages if message.role is Role.SYSTEM)]
    return "\n\n".join(part for part in parts if part).strip()


def tool_schema(tool: ToolSpec) -> dict[str, Any]:
    """A tool as both APIs describe it; each names the arguments' schema its own way."""
    return {"name": tool.name, "description": tool.description, "parameters": dict(tool.parameters)}


def estimated_usage(*, turn: Turn, response: LLMResponse) -> Usage:
    """Tokens by the characters rule: the prompt, messages and tool schemas in; the text and call
    arguments out. Marked `estimated`, so the usage record says it is no count."""
    sent = len(turn.system) + sum(len(message.content) for message in turn.messages)
    sent += sum(len(json.dumps(tool_schema(tool))) for tool in turn.tools)
    written = len(response.text) + sum(len(json.dumps(dict(call.arguments))) for call in response.tool_calls)
    return Usage(
        input_tokens=math.ceil(sent / CHARS_PER_TOKEN),
        output_tokens=math.ceil(written / CHARS_PER_TOKEN),
        estimated=True,
    )


class NetworkOptions(TypedDict, total=False):
    """What every network provider is built with; each adds its own options by keyword."""

    model: Required[str]
    api_key: Required[str]
    base_url: str | None
    timeout_seconds: float
    retry_policy: RetryPolicy | None
    breaker: Breaker | None
    max_tokens: int
    temperature: float


class NetworkProvider:
    service: ClassVar[str]  # the provider its usage records and metrics name
    sdk_errors: ClassVar[tuple[type[Exception], ...]]  # what its SDK raises, mapped by `map_error`

    def __init__(
        self,
        *,
        model: str,
        api_key: str,
        base_url: str | None = None,
        timeout_seconds: float = 60.0,
        retry_policy: RetryPolicy | None = None,
        breaker: Breaker | None = None,
        max_tokens: int = 1024,
        temperature: float = 0.2,
    ) -> None:
        self.model = model
        self.base_url = base_url or ""
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.retry_policy = retry_policy or RetryPolicy()
        self.breaker = breaker
        # Both SDKs' constructor arguments. max_retries=0: `call_with_retry` is the single place
        # that retries, with our backoff; a timeout is not retried (`LLMTimeoutError`).
        self._client_options: dict[str, Any] = {
            "api_key": api_key,
            "base_url": base_url,
            "timeout": timeout_seconds,
            "max_retries": 0,
        }

    def complete(
        self,
        *,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        on_text: TextCallback | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> LLMResponse:
        turn = Turn(
            messages=tuple(message for message in messages if message.role is not Role.SYSTEM),
            system=system_text(system=system, messages=messages),
            tools=tuple(tools or ()),
            max_tokens=max_tokens or self.max_tokens,
            temperature=self.temperature if temperature is None else temperature,
            json_schema=json_schema,
            stream=on_text is not None,
        )
        guard = StreamGuard(on_text)

        def attempt() -> LLMResponse:
            try:
                response = self._send(turn, guard)
            except self.sdk_errors as exc:
                raise guard.seal(self.map_error(exc)) from exc
            if response.usage.total_tokens:
                return response  # reported; a local server may report none (`openai_compat`)
            return dataclasses.replace(response, usage=estimated_usage(turn=turn, response=response))

        return metered_call(
            provider=self.service,
            model=self.model,
            call=lambda: call_with_retry(attempt, policy=self.retry_policy, breaker=self.breaker),
        )

    def _send(self, turn: Turn, on_text: StreamGuard) -> LLMResponse:
        """One attempt on the wire; streamed (text to `on_text` as it is written) when `turn.stream`."""
        raise NotImplementedError

    def map_error(self, exc: Exception) -> LLMError:
        raise NotImplementedError

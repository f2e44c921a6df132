"""OpenAI Chat Completions adapter; also serves OpenAI-compatible servers (vLLM, Ollama, llama.cpp)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionContentPartParam,
    ChatCompletionMessageParam,
    ChatCompletionToolParam,
)

from apps.llm.base import (
    AnswerArguments,
    Breaker,
    LLMBadResponseError,
    LLMError,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
    StreamGuard,
    call_with_retry,
    error_from_status,
)
from apps.llm.types import (
    LLMResponse,
    Message,
    Role,
    StopReason,
    TextCallback,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)
from apps.llm.usage import metered_call

_STOP_REASONS = {
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
}


class OpenAIProvider:
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
        structured_outputs: bool | None = None,
    ) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.retry_policy = retry_policy or RetryPolicy()
        self.breaker = breaker
        # OpenAI itself wants `max_completion_tokens` (reasoning models reject `max_tokens`), while
        # compatible servers reached through a base URL reliably understand only `max_tokens`.
        self._max_tokens_key = "max_tokens" if base_url else "max_completion_tokens"
        # JSON-schema structured outputs on OpenAI itself; compatible servers reliably know only JSON mode.
        self._structured_outputs = not base_url if structured_outputs is None else structured_outputs
        # max_retries=0: call_with_retry is the single place that retries, with our backoff.
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_seconds, max_retries=0)

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
        request: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(messages=messages, system=system),
            self._max_tokens_key: max_tokens or self.max_tokens,
            "temperature": self.temperature if temperature is None else temperature,
        }
        if tools:
            request["tools"] = [to_openai_tool(tool) for tool in tools]
        if json_schema is not None:
            request["response_format"] = self._json_format(json_schema)
        guard = StreamGuard(on_text)

        def attempt() -> LLMResponse:
            try:
                if on_text is None:
                    return from_openai_completion(self._client.chat.completions.create(**request))
                chunks = self._client.chat.completions.create(
                    **request, stream=True, stream_options={"include_usage": True}
                )
                return accumulate_openai_stream(chunks, on_text=guard, tools=tools)
            except (openai.OpenAIError, httpx.HTTPError) as exc:
                raise guard.seal(map_openai_error(exc)) from exc

        return metered_call(
            provider="openai",
            model=self.model,
            call=lambda: call_with_retry(attempt, policy=self.retry_policy, breaker=self.breaker),
        )

    def _json_format(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        if not self._structured_outputs:
            return {"type": "json_object"}
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": dict(schema)}}


def to_openai_tool(tool: ToolSpec) -> ChatCompletionToolParam:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": dict(tool.parameters)},
    }


def to_openai_messages(*, messages: Sequence[Message], system: str | None) -> list[ChatCompletionMessageParam]:
    converted: list[ChatCompletionMessageParam] = []
    if system:
        converted.append({"role": "system", "content": system})
    for message in messages:
        converted.append(_to_openai_message(message))
    return converted


def _to_openai_message(message: Message) -> ChatCompletionMessageParam:
    if message.role is Role.SYSTEM:
        return {"role": "system", "content": message.content}
    if message.role is Role.USER:
        if message.images:
            parts: list[ChatCompletionContentPartParam] = [
                {"type": "image_url", "image_url": {"url": f"data:{image.media_type};base64,{_b64(image.data)}"}}
                for image in message.images
            ]
            parts.append({"type": "text", "text": message.content})
            return {"role": "user", "content": parts}
        return {"role": "user", "content": message.content}
    if message.role is Role.TOOL:
        # Chat Completions has no error flag on tool results; say it in the content instead.
        content = f"ERROR: {message.content}" if message.is_error else message.content
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": content}
    if not message.tool_calls:
        return {"role": "assistant", "content": message.content}
    return {
        "role": "assistant",
        "content": message.content or None,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
            }
            for call in message.tool_calls
        ],
    }


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def from_openai_completion(completion: ChatCompletion) -> LLMResponse:
    if not completion.choices:
        raise LLMBadResponseError("completion has no choices")
    choice = completion.choices[0]
    tool_calls = tuple(
        ToolCall(id=call.id, name=call.function.name, arguments=parse_arguments(call.function.arguments))
        for call in choice.message.tool_calls or ()
        if call.type == "function"
    )
    return LLMResponse(
        text=choice.message.content or "",
        tool_calls=tool_calls,
        stop_reason=_stop_reason(choice.finish_reason, has_tool_calls=bool(tool_calls)),
        usage=_usage(completion.usage),
        model=completion.model,
    )


@dataclass
class _PartialToolCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def accumulate_openai_stream(
    chunks: Iterable[ChatCompletionChunk], *, on_text: TextCallback, tools: Sequence[ToolSpec] | None = None
) -> LLMResponse:
    """Text deltas go to `on_text` as they arrive, until the turn's first tool-call delta: text
    after it belongs to a tool-call turn (kept in `text` as its reasoning), not to an answer.
    An answer argument of a call (`ToolSpec.answer_argument`) goes to `on_text` as it is written."""
    answers = AnswerArguments(tools=tools, on_text=on_text)
    text: list[str] = []
    partial_calls: dict[int, _PartialToolCall] = {}
    finish_reason: str | None = None
    usage = Usage()
    model = ""
    tools_started = False
    for chunk in chunks:
        model = chunk.model or model
        if chunk.usage is not None:  # the include_usage chunk, which has no choices
            usage = _usage(chunk.usage)
        for choice in chunk.choices[:1]:
            finish_reason = choice.finish_reason or finish_reason
            if choice.delta.tool_calls:
                tools_started = True
            if choice.delta.content:
                text.append(choice.delta.content)
                if not tools_started:
                    on_text(TextDelta(text=choice.delta.content))
            # Tool calls arrive in pieces keyed by index: id and name first, then argument fragments.
            for delta in choice.delta.tool_calls or ():
                partial = partial_calls.setdefault(delta.index, _PartialToolCall())
                partial.id = delta.id or partial.id
                if delta.function is not None:
                    partial.name = delta.function.name or partial.name
                    partial.arguments.append(delta.function.arguments or "")
                    answers.feed(
                        index=delta.index, call_id=partial.id, name=partial.name, fragment=partial.arguments[-1]
                    )
    tool_calls = tuple(
        ToolCall(id=partial.id, name=partial.name, arguments=parse_arguments("".join(partial.arguments)))
        for _, partial in sorted(partial_calls.items())
    )
    return LLMResponse(
        text="".join(text),
        tool_calls=tool_calls,
        stop_reason=_stop_reason(finish_reason, has_tool_calls=bool(tool_calls)),
        usage=usage,
        model=model,
    )


def parse_arguments(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LLMBadResponseError(f"tool arguments are not JSON: {raw[:200]!r}") from exc
    if not isinstance(parsed, dict):
        raise LLMBadResponseError(f"tool arguments are not a JSON object: {raw[:200]!r}")
    return parsed


def _stop_reason(finish_reason: str | None, *, has_tool_calls: bool) -> StopReason:
    # Some compatible servers report "stop" alongside tool calls; the calls are what matters.
    if has_tool_calls:
        return StopReason.TOOL_USE
    return _STOP_REASONS.get(finish_reason or "", StopReason.END_TURN)


def _usage(usage: CompletionUsage | None) -> Usage:
    if usage is None:
        return Usage()
    details = usage.prompt_tokens_details
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        cache_read_tokens=(details.cached_tokens or 0) if details is not None else 0,
    )


def map_openai_error(exc: Exception) -> LLMError:
    if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException)):
        return LLMTimeoutError(f"OpenAI request timed out: {exc}")
    if isinstance(exc, openai.APIStatusError):
        return error_from_status(
            status_code=exc.status_code, message=f"OpenAI: {exc.message}", headers=exc.response.headers
        )
    if isinstance(exc, (openai.APIConnectionError, httpx.TransportError)):
        return LLMUnavailableError(f"OpenAI unreachable: {exc}")
    if isinstance(exc, openai.APIResponseValidationError):
        return LLMBadResponseError(f"OpenAI: {exc}")
    if isinstance(exc, openai.APIError):
        # An error event inside a 200 stream: the service failed midway, as a 5xx says.
        return LLMUnavailableError(f"OpenAI stream error: {exc}", status_code=500)
    return LLMError(f"OpenAI: {exc}")

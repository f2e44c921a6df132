"""Anthropic Messages API adapter."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Sequence
from typing import Any, Literal, Unpack

import anthropic
import httpx
from anthropic.types import Base64ImageSourceParam, ContentBlockParam, ImageBlockParam, MessageParam, ToolParam
from anthropic.types import Message as AnthropicMessage
from anthropic.types import Usage as AnthropicUsage

from apps.llm.base import (
    AnswerArguments,
    LLMError,
    LLMTimeoutError,
    LLMUnavailableError,
    StreamGuard,
    error_from_status,
)
from apps.llm.network import NetworkOptions, NetworkProvider, Turn, tool_schema
from apps.llm.types import (
    ImagePart,
    LLMResponse,
    Message,
    Role,
    StopReason,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)

CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}
JSON_TOOL = "answer_json"
_STOP_REASONS = {"tool_use": StopReason.TOOL_USE, "max_tokens": StopReason.MAX_TOKENS}
_STREAM_ERROR_STATUS = {"rate_limit_error": 429, "overloaded_error": 529, "api_error": 500}


class AnthropicProvider(NetworkProvider):
    service = "anthropic"
    sdk_errors = (anthropic.AnthropicError, httpx.HTTPError)

    def __init__(self, *, prompt_cache: bool = True, **options: Unpack[NetworkOptions]) -> None:
        super().__init__(**options)
        self.prompt_cache = prompt_cache
        self._client = anthropic.Anthropic(**self._client_options)

    def map_error(self, exc: Exception) -> LLMError:
        return map_anthropic_error(exc)

    def _send(self, turn: Turn, on_text: StreamGuard) -> LLMResponse:
        request = self._request(turn)
        forced_json = "tool_choice" in request
        if not turn.stream or forced_json:
            response = from_anthropic_message(self._client.messages.create(**request))
            return _json_answer(response) if forced_json else response
        # The SDK's stream helper accumulates text and input_json_delta fragments into the same
        # Message a non-streaming call returns, so one parser serves both paths. Text after the
        # first tool_use block starts belongs to a tool-call turn, not an answer. An answer
        # argument of a call (ToolSpec.answer_argument) streams as it is written.
        tools_started = False
        answers = AnswerArguments(tools=turn.tools, on_text=on_text)
        calls: dict[int, tuple[str, str]] = {}  # block index: (id, name)
        with self._client.messages.stream(**request) as stream:
            for event in stream:
                if event.type == "content_block_start" and event.content_block.type == "tool_use":
                    tools_started = True
                    calls[event.index] = (event.content_block.id, event.content_block.name)
                elif event.type == "text" and not tools_started:
                    on_text(TextDelta(text=event.text))
                elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                    call_id, name = calls.get(event.index, ("", ""))
                    fragment = event.delta.partial_json
                    answers.feed(index=event.index, call_id=call_id, name=name, fragment=fragment)
            return from_anthropic_message(stream.get_final_message())

    def _request(self, turn: Turn) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": to_anthropic_messages(turn.messages),
            "max_tokens": turn.max_tokens,
            "temperature": turn.temperature,
        }
        if turn.system:
            # The agent resends the same system prompt and tools every turn: cached, they are read
            # at a tenth of the price (and faster) after the first turn (bench/chat/prompt_cache.py).
            request["system"] = [{"type": "text", "text": turn.system, **self._cache_control()}]
        if turn.tools:
            request["tools"] = [to_anthropic_tool(tool) for tool in turn.tools]
        elif turn.json_schema is not None:
            # Anthropic has no JSON mode: a forced call of a tool whose input is the answer is its structured output.
            answer_tool = {
                "name": JSON_TOOL,
                "description": "Record your answer.",
                "input_schema": dict(turn.json_schema),
            }
            request["tools"] = [answer_tool]
            request["tool_choice"] = {"type": "tool", "name": JSON_TOOL}
        if request.get("tools"):
            request["tools"][-1] = {**request["tools"][-1], **self._cache_control()}
        if turn.tools and request["messages"]:
            # A tool loop's conversation grows by one turn a call: a breakpoint at its end lets the
            # next call read all of it from the cache, not only the system prompt and tools.
            last = request["messages"][-1]["content"]
            last[-1] = {**last[-1], **self._cache_control()}
        return request

    def _cache_control(self) -> dict[str, Any]:
        # Off (ANTHROPIC_PROMPT_CACHE=0) for compatible servers that reject the field.
        return {"cache_control": CACHE_CONTROL} if self.prompt_cache else {}


def _json_answer(response: LLMResponse) -> LLMResponse:
    """The forced tool call's input as the answer's text, as JSON mode would have written it."""
    call = next((call for call in response.tool_calls if call.name == JSON_TOOL), None)
    if call is None:
        return response
    return dataclasses.replace(
        response, text=json.dumps(dict(call.arguments)), tool_calls=(), stop_reason=StopReason.END_TURN
    )


def to_anthropic_tool(tool: ToolSpec) -> ToolParam:
    schema = tool_schema(tool)
    return {"name": schema["name"], "description": schema["description"], "input_schema": schema["parameters"]}


def to_anthropic_messages(messages: Sequence[Message]) -> list[MessageParam]:
    """Turns become content blocks; consecutive turns of one role merge into one message.

    The API wants strict user/assistant alternation, and all results of one assistant turn's
    tool calls together in the next user message.
    """
    merged: list[tuple[Literal["user", "assistant"], list[ContentBlockParam]]] = []
    for message in messages:
        role: Literal["user", "assistant"] = "assistant" if message.role is Role.ASSISTANT else "user"
        blocks = _content_blocks(message)
        if not blocks:
            continue
        if merged and merged[-1][0] == role:
            merged[-1][1].extend(blocks)
        else:
            merged.append((role, blocks))
    return [{"role": role, "content": blocks} for role, blocks in merged]


def _content_blocks(message: Message) -> list[ContentBlockParam]:
    if message.role is Role.TOOL:
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.content,
                "is_error": message.is_error,
            }
        ]
    blocks: list[ContentBlockParam] = [_image_block(image) for image in message.images]
    # The API rejects empty text blocks, which an assistant turn with only tool calls would give.
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.arguments)}
        for call in message.tool_calls
    )
    return blocks


def _image_block(image: ImagePart) -> ImageBlockParam:
    source: Base64ImageSourceParam = {
        "type": "base64",
        "media_type": image.media_type,  # type: ignore[typeddict-item]  # a vision type, checked by the caller
        "data": base64.b64encode(image.data).decode("ascii"),
    }
    return {"type": "image", "source": source}


def from_anthropic_message(message: AnthropicMessage) -> LLMResponse:
    text = "".join(block.text for block in message.content if block.type == "text")
    tool_calls = tuple(
        ToolCall(id=block.id, name=block.name, arguments=dict(block.input))
        for block in message.content
        if block.type == "tool_use"
    )
    stop_reason = _STOP_REASONS.get(message.stop_reason or "", StopReason.END_TURN)
    return LLMResponse(
        text=text,
        tool_calls=tool_calls,
        stop_reason=StopReason.TOOL_USE if tool_calls else stop_reason,
        usage=_usage(message.usage),
        model=message.model,
    )


def _usage(usage: AnthropicUsage) -> Usage:
    # Cached prompt tokens are reported apart from input_tokens but are still input we sent.
    written, read = usage.cache_creation_input_tokens or 0, usage.cache_read_input_tokens or 0
    return Usage(
        input_tokens=usage.input_tokens + written + read,
        output_tokens=usage.output_tokens,
        cache_write_tokens=written,
        cache_read_tokens=read,
    )


def map_anthropic_error(exc: Exception) -> LLMError:
    if isinstance(exc, (anthropic.APITimeoutError, httpx.TimeoutException)):
        return LLMTimeoutError(f"Anthropic request timed out: {exc}")
    if isinstance(exc, anthropic.APIStatusError):
        status_code: int | None = exc.status_code
        if exc.status_code < 400:
            # An error event inside a 200 stream keeps the 200; its body's type tells what went wrong.
            status_code = _STREAM_ERROR_STATUS.get(_body_error_type(exc.body))
        if status_code is None:
            return LLMError(f"Anthropic: {exc.message}")
        return error_from_status(
            status_code=status_code, message=f"Anthropic: {exc.message}", headers=exc.response.headers
        )
    if isinstance(exc, (anthropic.APIConnectionError, httpx.TransportError)):
        return LLMUnavailableError(f"Anthropic unreachable: {exc}")
    return LLMError(f"Anthropic: {exc}")


def _body_error_type(body: object) -> str:
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            return str(error.get("type", ""))
    return ""

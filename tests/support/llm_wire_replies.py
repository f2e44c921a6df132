"""What the LLM wire stub answers (replies, faults, cut streams) and how each API writes it.

`OpenAIFormat` and `AnthropicFormat` turn a queued step into the JSON body or the SSE events of
the Chat Completions and Messages APIs: text streamed word by word (or in the reply's chunks),
tool-call arguments cut mid-JSON, usage and stop reasons as each API reports them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias


@dataclass(frozen=True)
class StubToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class StubReply:
    text: str = ""
    tool_calls: tuple[StubToolCall, ...] = ()
    # The exact text deltas to stream; by default the text is streamed word by word.
    chunks: tuple[str, ...] | None = None
    stop_reason: str = ""  # "max_tokens" to report truncation; otherwise derived from tool_calls
    input_tokens: int = 21
    output_tokens: int = 9
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    model: str = "stub-model"
    delay: float = 0.0  # seconds before answering, to trip client timeouts
    # Streaming as a real model generates: the wait before the first content chunk (after the
    # headers), and between chunks (50 tokens/s is 0.02).
    first_chunk_delay: float = 0.0
    chunk_delay: float = 0.0
    trailing_text: str = ""  # streamed after the tool calls (some compatible servers interleave)
    # Tool-call arguments in pieces of this many characters, as a model writes them (0: in three).
    argument_chunk_chars: int = 0


@dataclass(frozen=True)
class StubFault:
    status: int
    retry_after: float | None = None
    message: str = "stub fault"


@dataclass(frozen=True)
class StubStreamCut:
    """A 200 stream that sends `chunks` of text and then an in-stream error event."""

    chunks: tuple[str, ...]
    error_type: str = "overloaded_error"


StubStep: TypeAlias = StubReply | StubFault | StubStreamCut


def error_type(status: int) -> str:
    return {429: "rate_limit_error", 529: "overloaded_error", 408: "timeout_error"}.get(status, "api_error")


def _words(reply: StubReply) -> tuple[str, ...]:
    if reply.chunks is not None:
        return reply.chunks
    if not reply.text:
        return ()
    first, *rest = reply.text.split(" ")
    return (first, *(f" {word}" for word in rest))


def _json_fragments(arguments: dict[str, Any], size: int = 0) -> list[str]:
    """Arguments JSON cut in three (or in pieces of `size` characters), as both APIs deliver it:
    no fragment is valid JSON alone, and a cut may fall inside an escape sequence."""
    encoded = json.dumps(arguments)
    if size:
        return [encoded[start : start + size] for start in range(0, len(encoded), size)]
    third = max(1, len(encoded) // 3)
    return [encoded[:third], encoded[third : 2 * third], encoded[2 * third :]]


class OpenAIFormat:
    def error(self, status: int, error_type: str, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": error_type, "param": None, "code": str(status)}}

    def complete(self, reply: StubReply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in reply.tool_calls
            ]
        return {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": reply.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish(reply)}],
            "usage": self._usage(reply),
        }

    def stream(self, reply: StubReply, body: dict[str, Any]) -> Iterator[str]:
        yield self._chunk(reply, {"role": "assistant", "content": ""})
        for piece in _words(reply):
            yield self._chunk(reply, {"content": piece})
        for index, call in enumerate(reply.tool_calls):
            opening = {
                "index": index,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            yield self._chunk(reply, {"tool_calls": [opening]})
            for fragment in _json_fragments(call.arguments, reply.argument_chunk_chars):
                yield self._chunk(reply, {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
        if reply.trailing_text:
            yield self._chunk(reply, {"content": reply.trailing_text})
        yield self._chunk(reply, {}, finish_reason=self._finish(reply))
        if (body.get("stream_options") or {}).get("include_usage"):
            yield self._data(
                {
                    "id": "chatcmpl-stub",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": reply.model,
                    "choices": [],
                    "usage": self._usage(reply),
                }
            )
        yield "data: [DONE]\n\n"

    def cut_stream(self, cut: StubStreamCut) -> Iterator[str]:
        reply = StubReply()
        for piece in cut.chunks:
            yield self._chunk(reply, {"content": piece})
        yield self._data({"error": {"message": "stub stream cut", "type": cut.error_type}})

    def _chunk(self, reply: StubReply, delta: dict[str, Any], finish_reason: str | None = None) -> str:
        return self._data(
            {
                "id": "chatcmpl-stub",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": reply.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }
        )

    @staticmethod
    def _data(payload: dict[str, Any]) -> str:
        return f"data: {json.dumps(payload)}\n\n"

    @staticmethod
    def _finish(reply: StubReply) -> str:
        if reply.stop_reason == "max_tokens":
            return "length"
        return "tool_calls" if reply.tool_calls else "stop"

    @staticmethod
    def _usage(reply: StubReply) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }
        if reply.cache_read_input_tokens:
            # OpenAI counts cached tokens inside prompt_tokens and names their share apart.
            usage["prompt_tokens"] += reply.cache_read_input_tokens
            usage["total_tokens"] += reply.cache_read_input_tokens
            usage["prompt_tokens_details"] = {"cached_tokens": reply.cache_read_input_tokens}
        return usage


class AnthropicFormat:
    def error(self, status: int, error_type: str, message: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": error_type, "message": message}}

    def complete(self, reply: StubReply) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
        content += [
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments} for call in reply.tool_calls
        ]
        return {
            **self._message(reply, content=content, stop_reason=self._stop(reply)),
            "usage": {**self._input_usage(reply), "output_tokens": reply.output_tokens},
        }

    def stream(self, reply: StubReply, body: dict[str, Any]) -> Iterator[str]:
        start = self._message(reply, content=[], stop_reason=None)
        yield self._event(
            "message_start",
            {"message": {**start, "usage": {**self._input_usage(reply), "output_tokens": 1}}},
        )
        yield self._event("ping", {})
        index = 0
        if reply.text:
            yield from self._text_block(index, _words(reply))
            index += 1
        for call in reply.tool_calls:
            yield self._event(
                "content_block_start",
                {
                    "index": index,
                    "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
                },
            )
            for fragment in _json_fragments(call.arguments, reply.argument_chunk_chars):
                yield self._event(
                    "content_block_delta",
                    {"index": index, "delta": {"type": "input_json_delta", "partial_json": fragment}},
                )
            yield self._event("content_block_stop", {"index": index})
            index += 1
        if reply.trailing_text:
            yield from self._text_block(index, (reply.trailing_text,))
        yield self._event(
            "message_delta",
            {
                "delta": {"stop_reason": self._stop(reply), "stop_sequence": None},
                "usage": {"output_tokens": reply.output_tokens},
            },
        )
        yield self._event("message_stop", {})

    def cut_stream(self, cut: StubStreamCut) -> Iterator[str]:
        reply = StubReply()
        start = self._message(reply, content=[], stop_reason=None)
        yield self._event("message_start", {"message": {**start, "usage": {"input_tokens": 1, "output_tokens": 1}}})
        yield from self._text_block(0, cut.chunks, close=False)
        yield self._event("error", {"error": {"type": cut.error_type, "message": "stub stream cut"}})

    def _text_block(self, index: int, pieces: tuple[str, ...], *, close: bool = True) -> Iterator[str]:
        yield self._event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
        for piece in pieces:
            yield self._event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": piece}})
        if close:
            yield self._event("content_block_stop", {"index": index})

    @staticmethod
    def _message(reply: StubReply, *, content: list[dict[str, Any]], stop_reason: str | None) -> dict[str, Any]:
        return {
            "id": "msg_stub",
            "type": "message",
            "role": "assistant",
            "model": reply.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
        }

    @staticmethod
    def _event(name: str, payload: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps({'type': name, **payload})}\n\n"

    @staticmethod
    def _input_usage(reply: StubReply) -> dict[str, int]:
        return {
            "input_tokens": reply.input_tokens,
            "cache_creation_input_tokens": reply.cache_creation_input_tokens,
            "cache_read_input_tokens": reply.cache_read_input_tokens,
        }

    @staticmethod
    def _stop(reply: StubReply) -> str:
        if reply.stop_reason:
            return reply.stop_reason
        return "tool_use" if reply.tool_calls else "end_turn"

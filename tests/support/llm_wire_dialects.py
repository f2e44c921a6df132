"""How OpenAI-compatible local servers answer where they differ from OpenAI: `LLMWireStub(dialect=…)`.

One constructor a server, each difference as its documentation and issue tracker show it (looked
up for issue 42 item 5; the numbers are the projects' GitHub issues and pull requests):
- `ollama`: its /v1 compatibility (docs.ollama.com/api/openai-compatibility: clients need a key,
  Ollama ignores it). Before 0.5.2 it ignored `stream_options` and streamed no usage
  (ollama/ollama#5200); it sends each tool call whole in one chunk, with no `index` before 0.4.7
  (#7881) and with index 0 for every call after (#15457); a model without tool support is refused
  with 400 "… does not support tools".
- `llamacpp`: llama-server (tools/server/README.md). Unknown fields are copied into its parameters
  and ignored; builds before ggml-org/llama.cpp#15444 put usage and timings on the finish chunk,
  asked or not; tools need `--jinja` (else a 500 "tools param requires --jinja flag"), and builds
  before tool calls streamed (#12379) refuse tools with `stream` ("Cannot use tools with stream").
  JSON mode it may accept and not keep to (#24096): a test scripts that answer's prose itself.
- `vllm`: its OpenAI-compatible server (docs.vllm.ai serving/openai_compatible_server, features/
  tool_calling). Before vllm-project/vllm#10463 unknown fields were a 400 (pydantic
  `extra_forbidden`, `stream_options` among them, as modelscope/ms-agent#489 shows); errors are a
  top-level object (`{"object": "error", "message": …}`); without `--enable-auto-tool-choice
  --tool-call-parser` tools are refused ('"auto" tool choice requires …') or, where the model's chat
  template renders them and nothing parses the answer, the calls come back as `<tool_call>` text
  (anomalyco/opencode#1122); the Outlines structured-output backend refuses `json_object` (#4070).

Where a request offered no tools (a client that fell back to describing them in its prompt), a
scripted reply's calls come back as text too, as a model following that prompt writes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from tests.support.llm_wire_replies import OpenAIFormat, StubReply, StubToolCall, _json_fragments, _words


@dataclass(frozen=True)
class Dialect:
    name: str
    # Where a stream's usage goes: its own chunk when asked (OpenAI, vLLM, Ollama from 0.5.2), on
    # the finish chunk whether asked or not (llama-server before #15444), nowhere (Ollama before 0.5.2).
    stream_usage: Literal["chunk", "finish", "none"] = "chunk"
    refuses_stream_options: bool = False
    # Offered tools: structured calls, calls written as text, or a refusal (`tools_refusal`).
    tools: Literal["native", "text", "refuse"] = "native"
    tools_refusal: tuple[int, str] = (400, "")
    stream_tools: bool = True
    whole_tool_calls: bool = False  # each call in one chunk, its arguments complete
    tool_call_index: Literal["counted", "zero", "missing"] = "counted"
    tool_text: Literal["hermes", "json"] = "hermes"  # <tool_call> blocks, or Llama 3.1's bare JSON
    json_refusal: tuple[int, str] | None = None
    top_level_errors: bool = False  # vLLM's error body

    def refusal(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """The error this server answers `body` with before generating anything, if any."""
        api = DialectFormat(self, body)
        if self.refuses_stream_options and "stream_options" in body:
            extra = [
                {"type": "extra_forbidden", "loc": ("body", "stream_options"), "msg": "Extra inputs are not permitted"}
            ]
            return 400, api.error(400, "BadRequestError", str(extra))
        if body.get("tools") and self.tools == "refuse":
            status, message = self.tools_refusal
            return status, api.error(status, "server_error" if status >= 500 else "invalid_request_error", message)
        if body.get("tools") and body.get("stream") and not self.stream_tools:
            return 500, api.error(500, "server_error", "Cannot use tools with stream")
        if "response_format" in body and self.json_refusal is not None:
            status, message = self.json_refusal
            return status, api.error(status, "BadRequestError", message)
        return None


def ollama(*, tools: bool = True, usage_in_stream: bool = False, tool_call_index: str = "zero") -> Dialect:
    return Dialect(
        name="ollama",
        stream_usage="chunk" if usage_in_stream else "none",
        tools="native" if tools else "refuse",
        tools_refusal=(400, "registry.ollama.ai/library/gemma3:270m does not support tools"),
        whole_tool_calls=True,
        tool_call_index="missing" if tool_call_index == "missing" else "zero",
    )


def llamacpp(*, jinja: bool = True, stream_tools: bool = True) -> Dialect:
    return Dialect(
        name="llamacpp",
        stream_usage="finish",
        tools="native" if jinja else "refuse",
        tools_refusal=(500, "tools param requires --jinja flag"),
        stream_tools=stream_tools,
    )


def vllm(
    *,
    tool_parser: bool = True,
    auto_tool_choice_refused: bool = False,
    tool_text: Literal["hermes", "json"] = "hermes",
    extra_fields: bool = False,
    outlines_json: bool = False,
) -> Dialect:
    tools: Literal["native", "text", "refuse"] = "native"
    if not tool_parser:
        tools = "refuse" if auto_tool_choice_refused else "text"
    return Dialect(
        name="vllm",
        refuses_stream_options=not extra_fields,
        tools=tools,
        tools_refusal=(
            400,
            '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        ),
        tool_text=tool_text,
        json_refusal=(
            (400, "Invalid request type for Outlines backend (StructuredOutputOptions.JSON_OBJECT)")
            if outlines_json
            else None
        ),
        top_level_errors=True,
    )


class DialectFormat(OpenAIFormat):
    """Chat Completions as `dialect` writes it, for one request `body`."""

    def __init__(self, dialect: Dialect, body: dict[str, Any]) -> None:
        self.dialect = dialect
        self.body = body

    def error(self, status: int, error_type: str, message: str) -> dict[str, Any]:
        if self.dialect.top_level_errors:
            return {"object": "error", "message": message, "type": error_type, "param": None, "code": status}
        return {"error": {"code": status, "message": message, "type": error_type}}

    def complete(self, reply: StubReply) -> dict[str, Any]:
        return super().complete(self._served(reply))

    def stream(self, reply: StubReply, body: dict[str, Any]) -> Iterator[str]:
        reply = self._served(reply)
        yield self._chunk(reply, {"role": "assistant", "content": ""})
        for piece in _words(reply):
            yield self._chunk(reply, {"content": piece})
        for index, call in enumerate(reply.tool_calls):
            yield from self._call_chunks(reply, index, call)
        if reply.trailing_text:
            yield self._chunk(reply, {"content": reply.trailing_text})
        finish: dict[str, Any] = {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": reply.model,
            "choices": [{"index": 0, "delta": {}, "finish_reason": self._finish(reply)}],
        }
        if self.dialect.stream_usage == "finish":
            timings = {"prompt_n": reply.input_tokens, "predicted_n": reply.output_tokens}
            finish |= {"usage": self._usage(reply), "timings": timings}
        yield self._data(finish)
        asked = (body.get("stream_options") or {}).get("include_usage")
        if self.dialect.stream_usage == "chunk" and asked:
            yield self._data({**finish, "choices": [], "usage": self._usage(reply)})
        yield "data: [DONE]\n\n"

    def _call_chunks(self, reply: StubReply, index: int, call: StubToolCall) -> Iterator[str]:
        opening: dict[str, Any] = {"id": call.id, "type": "function", "function": {"name": call.name}}
        number = {"counted": index, "zero": 0}.get(self.dialect.tool_call_index)
        if number is not None:
            opening["index"] = number
        if self.dialect.whole_tool_calls:
            opening["function"]["arguments"] = json.dumps(call.arguments)
            yield self._chunk(reply, {"tool_calls": [opening]})
            return
        opening["function"]["arguments"] = ""
        yield self._chunk(reply, {"tool_calls": [opening]})
        for fragment in _json_fragments(call.arguments, reply.argument_chunk_chars):
            yield self._chunk(reply, {"tool_calls": [{"index": number, "function": {"arguments": fragment}}]})

    def _served(self, reply: StubReply) -> StubReply:
        """A reply's calls as this server returns them: as text when it parses no calls, or when
        the request offered no tools (the model followed a prompt that described them)."""
        if not reply.tool_calls or (self.dialect.tools == "native" and self.body.get("tools")):
            return reply
        calls = [{"name": call.name, "arguments": call.arguments} for call in reply.tool_calls]
        if self.dialect.tool_text == "json":
            written = [json.dumps({"name": call["name"], "parameters": call["arguments"]}) for call in calls]
        else:
            written = [f"<tool_call>\n{json.dumps(call)}\n</tool_call>" for call in calls]
        text = "\n".join([reply.text, *written]).strip()
        return replace(reply, text=text, tool_calls=(), chunks=None)

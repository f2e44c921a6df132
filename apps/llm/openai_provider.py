"""OpenAI Chat Completions adapter; also serves OpenAI-compatible servers (Ollama, llama.cpp's
llama-server, vLLM), whose differences `apps.llm.openai_compat` detects and works around."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Unpack

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
    LLMBadResponseError,
    LLMError,
    LLMTimeoutError,
    LLMUnavailableError,
    StreamGuard,
    error_from_status,
    stream_text,
)
from apps.llm.network import NetworkOptions, NetworkProvider, Turn, tool_schema
from apps.llm.openai_compat import (
    ServerQuirks,
    first_json_object,
    json_prompt,
    quirks_for,
    quirks_learn,
    text_history,
    tools_prompt,
)
from apps.llm.text_tool_calls import ToolCallText, text_tool_calls
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

_STOP_REASONS = {
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
}


class OpenAIProvider(NetworkProvider):
    service = "openai"
    sdk_errors = (openai.OpenAIError, httpx.HTTPError)

    def __init__(self, *, structured_outputs: bool | None = None, **options: Unpack[NetworkOptions]) -> None:
        super().__init__(**options)
        # OpenAI itself wants `max_completion_tokens` (reasoning models reject `max_tokens`), while
        # compatible servers reached through a base URL reliably understand only `max_tokens`.
        self._max_tokens_key = "max_tokens" if self.base_url else "max_completion_tokens"
        # JSON-schema structured outputs on OpenAI itself; compatible servers reliably know only JSON mode.
        self._structured_outputs = not self.base_url if structured_outputs is None else structured_outputs
        self._client = openai.OpenAI(**self._client_options)

    def map_error(self, exc: Exception) -> LLMError:
        return map_openai_error(exc)

    def _send(self, turn: Turn, on_text: StreamGuard) -> LLMResponse:
        """A compatible server that refuses a field it does not take gets the request again at once
        without it (`openai_compat`); OpenAI itself takes them all."""
        while True:
            quirks = quirks_for(self.base_url) if self.base_url else ServerQuirks()
            request = self._request(turn, quirks)
            try:
                return self._exchange(request, turn=turn, on_text=on_text)
            except openai.APIStatusError as exc:
                if not (self.base_url and quirks_learn(base_url=self.base_url, message=exc.message, request=request)):
                    raise

    def _request(self, turn: Turn, quirks: ServerQuirks) -> dict[str, Any]:
        messages, system = list(turn.messages), turn.system
        if not quirks.tools:
            messages = text_history(messages)
            if turn.tools:
                system = _joined(system, tools_prompt(turn.tools))
        if turn.json_schema is not None and not quirks.json_mode:
            system = _joined(system, json_prompt(turn.json_schema))
        request: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(messages=messages, system=system),
            self._max_tokens_key: turn.max_tokens,
            "temperature": turn.temperature,
        }
        if turn.tools and quirks.tools:
            request["tools"] = [to_openai_tool(tool) for tool in turn.tools]
        if turn.json_schema is not None and quirks.json_mode:
            request["response_format"] = self._json_format(turn.json_schema)
        if turn.stream and (quirks.stream_tools or "tools" not in request):
            request["stream"] = True
            if quirks.stream_options:
                request["stream_options"] = {"include_usage": True}
        return request

    def _exchange(self, request: dict[str, Any], *, turn: Turn, on_text: StreamGuard) -> LLMResponse:
        streamed = bool(request.get("stream"))
        # While tools are offered, text that may be a call written as text waits for the turn's end.
        held = ToolCallText(on_text) if streamed and turn.tools else None
        if streamed:
            chunks = self._client.chat.completions.create(**request)
            response = accumulate_openai_stream(chunks, on_text=held or on_text, tools=turn.tools)
        else:
            response = from_openai_completion(self._client.chat.completions.create(**request))
        if turn.tools and not response.tool_calls:
            text, calls = text_tool_calls(response.text, tools=turn.tools)
            if calls:
                response = dataclasses.replace(response, text=text, tool_calls=calls, stop_reason=StopReason.TOOL_USE)
        if held is not None:
            held.release(called=bool(response.tool_calls))
        elif turn.stream and not streamed and not response.tool_calls:
            stream_text(response.text, on_text)  # the server would not stream a turn with tools
        return _json_answer(response) if turn.json_schema is not None else response

    def _json_format(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        if not self._structured_outputs:
            return {"type": "json_object"}
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": dict(schema)}}


def _joined(*parts: str) -> str:
    return "\n\n".join(part for part in parts if part)


def _json_answer(response: LLMResponse) -> LLMResponse:
    """A compatible server may take JSON mode and not keep to it, or not take it: the first JSON
    object of the answer is the answer, without the prose or code fence around it."""
    try:
        json.loads(response.text)
        return response
    except ValueError:
        found = first_json_object(response.text)
    return response if found is None else dataclasses.replace(response, text=found)


def to_openai_tool(tool: ToolSpec) -> ChatCompletionToolParam:
    return {"type": "function", "function": tool_schema(tool)}  # type: ignore[typeddict-item]  # the same keys


def to_openai_messages(*, messages: Sequence[Message], system: str | None) -> list[ChatCompletionMessageParam]:
    converted: list[ChatCompletionMessageParam] = []
    if system:
        converted.append({"role": "system", "content": system})
    for message in messages:
        converted.append(_to_openai_message(message))
    return converted


def _to_openai_message(message: Message) -> ChatCompletionMessageParam:
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
    partial_calls: list[_PartialToolCall] = []
    places: dict[int | None, int] = {}  # a delta's index: its call's place in `partial_calls`
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
            # Ollama sends each call whole, with index 0 for every one or with none
            # (ollama/ollama#7881, #15457): a new id starts a new call whatever its index.
            for delta in choice.delta.tool_calls or ():
                place = places.get(delta.index)
                if place is None or (delta.id and partial_calls[place].id not in ("", delta.id)):
                    place = places[delta.index] = len(partial_calls)
                    partial_calls.append(_PartialToolCall())
                partial = partial_calls[place]
                partial.id = delta.id or partial.id
                if delta.function is not None:
                    partial.name = delta.function.name or partial.name
                    partial.arguments.append(delta.function.arguments or "")
                    answers.feed(index=place, call_id=partial.id, name=partial.name, fragment=partial.arguments[-1])
    tool_calls = tuple(
        ToolCall(id=partial.id, name=partial.name, arguments=parse_arguments("".join(partial.arguments)))
        for partial in partial_calls
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

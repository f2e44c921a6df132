"""Tool calls a model wrote as text, as models on local servers do when the server does not parse them.

Read when a turn offered tools and came back with none: Hermes-style blocks
`<tool_call>{"name": …, "arguments": …}</tool_call>` (Qwen and Hermes models; what vLLM returns as
text without a `--tool-call-parser`, and what `openai_compat.tools_prompt` asks for), or a whole
answer that is one JSON call `{"name": …, "arguments"|"parameters": …}` (Llama 3.1's JSON tool
format), also wrapped as llama.cpp's generic format writes it (`{"tool_call": {…}}`,
`{"tool_calls": [...]}`) or in a code fence. Only the offered tools' names count: other JSON is an
answer. `ToolCallText` holds such text back from a stream, so a call never shows as answer text.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from apps.llm.types import TextCallback, TextDelta, ToolCall, ToolSpec

OPENING = "<tool_call>"
_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"^```[a-z]*\s*(.*?)\s*```$", re.DOTALL)


def text_tool_calls(text: str, *, tools: Sequence[ToolSpec]) -> tuple[str, tuple[ToolCall, ...]]:
    """The calls written in `text` and the text without them; no calls, the text as it was."""
    names = {tool.name for tool in tools}
    if OPENING in text:
        calls = tuple(call for block in _BLOCK.findall(text) for call in _calls(_json(block), names))
        return (_BLOCK.sub("", text).strip(), calls) if calls else (text, ())
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    calls = tuple(_calls(_json(fenced.group(1) if fenced else stripped), names))
    return ("", calls) if calls else (text, ())


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _calls(value: Any, names: set[str]) -> list[ToolCall]:
    if isinstance(value, list):
        found = [_call(item, names) for item in value]
        return [call for call in found if call is not None] if all(found) else []
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        return _calls(value["tool_calls"], names)
    if isinstance(value, dict) and isinstance(value.get("tool_call"), dict):
        value = value["tool_call"]
    call = _call(value, names)
    return [call] if call is not None else []


def _call(value: Any, names: set[str]) -> ToolCall | None:
    if not isinstance(value, Mapping) or value.get("name") not in names:
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):  # some models write the arguments as a JSON string, as the API would
        arguments = _json(arguments) if arguments.strip() else {}
    if not isinstance(arguments, dict):
        return None
    return ToolCall(id=f"call_{uuid.uuid4().hex[:16]}", name=str(value["name"]), arguments=arguments)


class ToolCallText:
    """Between a stream and `on_text` while tools are offered: text that may be a call is held.

    A turn that opens with `{` or a code fence is held whole; otherwise text flows until a
    `<tool_call>` begins (a tail that could be its start waits for the next delta). When the turn
    ends, `release` sends what was held unless it held calls. An answer argument's text (a delta
    with a call id) is a structured call's and passes at once.
    """

    def __init__(self, on_text: TextCallback) -> None:
        self._on_text = on_text
        self._text = ""
        self._sent = 0
        self._holding = False

    def __call__(self, delta: TextDelta) -> None:
        if delta.call_id:
            self._on_text(delta)
            return
        self._text += delta.text
        if self._holding:
            return
        if self._sent == 0:
            opening = self._text.lstrip()
            if not opening or OPENING.startswith(opening):
                return  # nothing said yet, or perhaps the start of a call
            if opening.startswith(("{", "```", OPENING)):
                self._holding = True
                return
        start = self._text.find(OPENING, self._sent)
        if start >= 0:
            self._holding = True
            self._send(start)
            return
        tail = next((size for size in range(len(OPENING) - 1, 0, -1) if self._text.endswith(OPENING[:size])), 0)
        self._send(max(self._sent, len(self._text) - tail))

    def release(self, *, called: bool) -> None:
        if not called:
            self._send(len(self._text))

    def _send(self, end: int) -> None:
        if end > self._sent:
            self._on_text(TextDelta(text=self._text[self._sent : end]))
            self._sent = end

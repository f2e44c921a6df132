"""OpenAI-compatible servers (Ollama, llama.cpp's llama-server, vLLM): what each may refuse, learnt
from its answers, and the ways around it.

Detected by behaviour, not by the server's name: a request refused because of a field the server
does not take (its error names the field) is sent again at once without it, and the server's base
URL remembers that for the rest of the process (`quirks_for`). Each worker learns it by itself, at
the cost of one refused request. What each way around gives up:
- `stream_options`: no usage chunk is asked for; a stream without usage is estimated
  (`network.estimated_usage`) and its record marked so.
- `json_mode`: the JSON schema goes into the system prompt (`json_prompt`), and the first JSON
  object of the answer is taken as the answer (`first_json_object`, also when JSON mode was
  accepted but not kept to).
- `tools`: the tools are described in the system prompt (`tools_prompt`), the model writes its
  calls as text (`text_tool_calls`), and earlier calls and results go back as text (`text_history`).
- `stream_tools`: a turn that offers tools is not streamed; its answer reaches `on_text` at the end.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from apps.llm.network import tool_schema
from apps.llm.text_tool_calls import OPENING
from apps.llm.types import Message, Role, ToolSpec

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerQuirks:
    """Which request fields a server takes; all of them until it refuses one."""

    stream_options: bool = True
    json_mode: bool = True
    tools: bool = True
    stream_tools: bool = True


# What a server says when it refuses a field, by the quirk that leaves the field out, with the
# fields the request must have sent for the refusal to be about them. Any status counts:
# llama-server refuses with a 500.
_REFUSALS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    # llama-server builds before tool calls streamed (ggml-org/llama.cpp#12379): "Cannot use tools with stream".
    ("stream_tools", ("tools", "stream"), re.compile(r"tools with stream", re.I)),
    # vLLM before it allowed extra fields (vllm-project/vllm#10463): extra_forbidden at ('body', 'stream_options').
    ("stream_options", ("stream_options",), re.compile(r"stream_options", re.I)),
    # Ollama for a model without tools: "… does not support tools"; llama-server without --jinja:
    # "tools param requires --jinja flag"; vLLM without a tool parser: '"auto" tool choice requires
    # --enable-auto-tool-choice and --tool-call-parser to be set'.
    (
        "tools",
        ("tools",),
        re.compile(r"does not support tools|--jinja|tool.choice requires|unsupported param: tools", re.I),
    ),
    # vLLM's Outlines backend: "Invalid request type … (StructuredOutputOptions.JSON_OBJECT)"
    # (vllm-project/vllm#4070); LM Studio: "'response_format.type' must be 'json_schema'".
    ("json_mode", ("response_format",), re.compile(r"response_format|json_object", re.I)),
)

_quirks: dict[str, ServerQuirks] = {}
_lock = threading.Lock()


def quirks_for(base_url: str) -> ServerQuirks:
    with _lock:
        return _quirks.get(base_url, ServerQuirks())


def quirks_learn(*, base_url: str, message: str, request: Mapping[str, Any]) -> bool:
    """Whether the refusal `message` named a field of `request` that the server is now known not
    to take: then the request is worth sending again without it."""
    quirk = next(
        (
            quirk
            for quirk, fields, pattern in _REFUSALS
            if all(request.get(field) for field in fields) and pattern.search(message)
        ),
        None,
    )
    if quirk is None:
        return False
    with _lock:
        _quirks[base_url] = replace(_quirks.get(base_url, ServerQuirks()), **{quirk: False})
    logger.warning("the model server at %s refused %s; sent again without it: %.300s", base_url, quirk, message)
    return True


def quirks_reset() -> None:
    """Forget what every server refused (tests; a restarted server is otherwise relearnt per process)."""
    with _lock:
        _quirks.clear()


TOOLS_PROMPT = """You can call tools. To call one, write only
<tool_call>{{"name": "<the tool's name>", "arguments": {{<its arguments>}}}}</tool_call>
once for each call, and nothing else; each result comes back in a <tool_response> block. When you \
answer, write the answer alone, with no <tool_call>.

The tools, with the JSON schema of each one's arguments:
{tools}"""

JSON_PROMPT = (
    "Answer with one JSON object and nothing else (no prose, no code fence), matching this JSON schema:\n{schema}"
)


def tools_prompt(tools: Sequence[ToolSpec]) -> str:
    return TOOLS_PROMPT.format(tools="\n".join(json.dumps(tool_schema(tool)) for tool in tools))


def json_prompt(schema: Mapping[str, Any]) -> str:
    return JSON_PROMPT.format(schema=json.dumps(dict(schema)))


def text_history(messages: Sequence[Message]) -> list[Message]:
    """The conversation for a server that does not take tools: an assistant's calls as the
    `<tool_call>` text it would have written, the results that follow as one user turn of
    `<tool_response>` blocks (chat templates want user and assistant turns to alternate)."""
    names: dict[str, str] = {}
    converted: list[Message] = []
    for message in messages:
        if message.role is Role.ASSISTANT and message.tool_calls:
            calls = []
            for call in message.tool_calls:
                names[call.id] = call.name
                calls.append(
                    f"{OPENING}{json.dumps({'name': call.name, 'arguments': dict(call.arguments)})}</tool_call>"
                )
            converted.append(Message.assistant("\n".join([message.content, *calls]).strip()))
        elif message.role is Role.TOOL:
            result: dict[str, Any] = {"name": names.get(message.tool_call_id or "", ""), "content": message.content}
            if message.is_error:
                result["error"] = True
            block = f"<tool_response>{json.dumps(result)}</tool_response>"
            if converted and converted[-1].role is Role.USER and converted[-1].content.startswith("<tool_response>"):
                block = f"{converted.pop().content}\n{block}"
            converted.append(Message.user(block))
        else:
            converted.append(message)
    return converted


def first_json_object(text: str) -> str | None:
    """The first JSON object in `text` (after prose, inside a code fence), as it was written."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return text[match.start() : end]
    return None

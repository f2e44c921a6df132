"""What the extractive provider reads from a conversation: the question, the tool steps taken so far,
and the passages those steps returned; and from that, which tool to call next.

Tool results are JSON. Passages are found wherever an object carries `text` (or `content`), at the
top level or inside `results`, `chunks`, `blocks` or `documents` lists, nested at will; identity
fields (`file_id`/`doc_id`, `file_name`/`name`, `path`) are inherited from the enclosing object.
A passage may carry `location` (string or {page, heading}), `chunk_id`/`block_id`, and `n`: when a
tool already numbered its sources, that number is kept so `[n]` means the same to both sides.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from apps.llm.extractive_text import is_relevant
from apps.llm.sources import describe_location, parse_user_prompt
from apps.llm.types import CitedSource, Message, Role, ToolCall, ToolSpec

SEARCH_TOOL = "search_folder"
REWRITE_TOOL = "rewrite_query"
# read_document is the 001 name, get_file the 000 one; whichever the caller offers is used.
READ_TOOLS = ("read_document", "get_file")
_READ_ARGUMENTS = ("doc_id", "file_id", "document_id")
SEARCH_K = 8
MAX_DOCUMENTS_READ = 2

_LIST_KEYS = ("results", "chunks", "blocks", "documents")
_INHERITED_KEYS = ("file_id", "doc_id", "file_name", "name", "path")


@dataclass(frozen=True)
class Step:
    call: ToolCall
    result: Message | None  # None while the caller has not sent a result back

    def payload(self) -> Any:
        if self.result is None or self.result.is_error:
            return None
        try:
            return json.loads(self.result.content)
        except json.JSONDecodeError:
            return None


@dataclass(frozen=True)
class Turn:
    question: str
    sources: list[CitedSource]
    steps: list[Step]
    calls_before: int  # tool calls in earlier turns, so new call ids never repeat


def read_turn(messages: Sequence[Message]) -> Turn:
    """The current turn starts after the last plain assistant answer; its first user message asks.

    Later user messages in the turn (say, "answer with what you have") are instructions, not the
    question, but sources they carry still count.
    """
    start = 0
    for index, message in enumerate(messages):
        if message.role is Role.ASSISTANT and not message.tool_calls:
            start = index + 1
    current = messages[start:]
    prompts = [parse_user_prompt(message.content) for message in current if message.role is Role.USER]
    results = {message.tool_call_id: message for message in current if message.role is Role.TOOL}
    return Turn(
        question=prompts[0].question if prompts else "",
        sources=[
            CitedSource(n=s.n, file_id="", file_name=s.file_name, path=s.path, location=s.location, text=s.text)
            for prompt in prompts
            for s in prompt.sources
        ],
        steps=[Step(call=call, result=results.get(call.id)) for message in current for call in message.tool_calls],
        calls_before=sum(len(message.tool_calls) for message in messages[:start]),
    )


def next_calls(turn: Turn, *, tools: Sequence[ToolSpec]) -> list[ToolCall]:
    """search -> (rewrite -> search, when weak) -> read the top documents -> [] meaning answer now.

    A step whose tool is not offered is skipped, so a caller that offers no tools gets an answer.
    """
    offered = {tool.name: tool for tool in tools}

    def call(name: str, arguments: dict[str, Any], offset: int = 0) -> ToolCall:
        call_id = f"xt_{turn.calls_before + len(turn.steps) + offset + 1}"
        return ToolCall(id=call_id, name=name, arguments=_fit(arguments, offered[name]))

    searches = [step for step in turn.steps if step.call.name == SEARCH_TOOL]
    rewrites = [step for step in turn.steps if step.call.name == REWRITE_TOOL]
    if SEARCH_TOOL in offered:
        if not searches:
            return [call(SEARCH_TOOL, {"query": turn.question, "k": SEARCH_K})]
        if REWRITE_TOOL in offered and not rewrites and _is_weak(searches[-1], question=turn.question):
            query = str(searches[-1].call.arguments.get("query") or turn.question)
            feedback = "The results barely mention the question's terms; try other words for the same thing."
            return [call(REWRITE_TOOL, {"original_query": query, "feedback": feedback})]
        rewritten = _rewritten_query(rewrites[-1]) if rewrites else ""
        if rewritten and not _searched(searches, rewritten):
            return [call(SEARCH_TOOL, {"query": rewritten, "k": SEARCH_K})]
    reader = next((name for name in READ_TOOLS if name in offered), None)
    if reader is None:
        return []
    argument = _read_argument(offered[reader])
    return [
        call(reader, {argument: file_id}, offset)
        for offset, file_id in enumerate(_unread_top_files(turn, searches=searches))
    ]


def gathered_sources(turn: Turn) -> list[CitedSource]:
    """Every distinct passage of the turn, numbered in the order gathered."""
    by_key: dict[tuple[str, str], CitedSource] = {}
    for source in turn.sources:
        by_key[(source.path, source.text)] = source
    for step in turn.steps:
        for item in _passages(step.payload(), inherited={}):
            key = (_file_id(item), str(item.get("chunk_id") or item.get("block_id") or _text(item)))
            if key in by_key:
                continue
            taken = {source.n for source in by_key.values()}
            n = item.get("n")
            if not isinstance(n, int) or n in taken:
                n = max(taken, default=0) + 1
            by_key[key] = CitedSource(
                n=n,
                file_id=_file_id(item),
                file_name=str(item.get("file_name") or item.get("name") or ""),
                path=str(item.get("path") or ""),
                location=_location(item.get("location")),
                text=_text(item),
                block_id=str(item.get("chunk_id") or item.get("block_id") or ""),
            )
    return list(by_key.values())


def _unread_top_files(turn: Turn, *, searches: list[Step]) -> list[str]:
    read_ids = {
        str(step.call.arguments.get(argument))
        for step in turn.steps
        if step.call.name in READ_TOOLS
        for argument in _READ_ARGUMENTS
        if argument in step.call.arguments
    }
    candidates: list[str] = []
    for search in searches:
        if _is_weak(search, question=turn.question):
            continue  # reading documents that barely touch the question cannot help
        for item in _passages(search.payload(), inherited={}):
            file_id = _file_id(item)
            if file_id and file_id not in read_ids and file_id not in candidates:
                candidates.append(file_id)
    return candidates[: max(0, MAX_DOCUMENTS_READ - len(read_ids))]


def _read_argument(tool: ToolSpec) -> str:
    properties = tool.parameters.get("properties")
    if isinstance(properties, Mapping):
        for argument in _READ_ARGUMENTS:
            if argument in properties:
                return argument
    return "doc_id" if tool.name == "read_document" else "file_id"


def _fit(arguments: dict[str, Any], tool: ToolSpec) -> dict[str, Any]:
    """Drop what the tool's schema does not list (a `k` the caller's search takes no notice of)."""
    properties = tool.parameters.get("properties")
    if not isinstance(properties, Mapping):
        return arguments
    return {key: value for key, value in arguments.items() if key in properties}


def _is_weak(search: Step, *, question: str) -> bool:
    texts = [_text(item) for item in _passages(search.payload(), inherited={})]
    return not any(is_relevant(question=question, text=text) for text in texts)


def _rewritten_query(step: Step) -> str:
    if step.result is None or step.result.is_error:
        return ""
    payload = step.payload()
    if isinstance(payload, dict):
        return str(payload.get("rewritten_query") or "").strip()
    if isinstance(payload, str):
        return payload.strip()
    # A rewrite tool may answer with the bare query, as in the 000 seed.
    return step.result.content.strip() if payload is None else ""


def _searched(searches: list[Step], query: str) -> bool:
    return any(str(step.call.arguments.get("query", "")).strip() == query for step in searches)


def _passages(node: Any, *, inherited: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if isinstance(node, list):
        for child in node:
            yield from _passages(child, inherited=inherited)
        return
    if not isinstance(node, dict) or node.get("error"):
        return
    merged = {**inherited, **node}
    nested = [merged[key] for key in _LIST_KEYS if isinstance(merged.get(key), list)]
    if nested:
        identity = {key: merged[key] for key in _INHERITED_KEYS if key in merged}
        for child in nested:
            yield from _passages(child, inherited=identity)
    elif _text(merged):
        yield merged


def _text(item: Mapping[str, Any]) -> str:
    value = item.get("text") or item.get("content") or ""
    return value if isinstance(value, str) else ""


def _file_id(item: Mapping[str, Any]) -> str:
    return str(item.get("file_id") or item.get("doc_id") or "")


def _location(value: Any) -> str:
    if isinstance(value, Mapping):
        return describe_location(value)
    return str(value or "")

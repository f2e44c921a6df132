"""How a message reads: one line for feeds and agents' history, and the `message` event payload."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from apps.chat.models import Message, MessageType


def message_payload(message: Message) -> dict[str, Any]:
    """The one shape of the `message` event, whoever publishes it (a run's answer or a typed
    inbox message): the whole content, its one-line text and, for answers, the citations."""
    content = message.content or {}
    return {
        "id": message.pk,
        "conversation_id": message.conversation_id,
        "role": message.role,
        "type": message.type,
        "text": message_text(message),
        "content": content,
        "citations": content.get("citations", []),
        "steps": content.get("steps", []),
        "sources_consulted": content.get("sources_consulted", []),
        "metadata": message.metadata,
        "created_at": message.created_at.isoformat(),
    }


def message_text(message: Message) -> str:
    """A one-line reading of any message type, for feeds and for the agents' history."""
    content = message.content or {}
    if message.type == MessageType.SUGGESTION:
        return (
            f"Suggestion: move {content.get('filePath', '')} to {content.get('targetFolder', '')} "
            f"({round(float(content.get('confidence', 0)) * 100)}% sure). {content.get('reasoning', '')}"
        ).strip()
    if message.type == MessageType.SEARCH_RESULT:
        paths = ", ".join(str(result.get("path", "")) for result in content.get("results", []))
        return f'Found {content.get("totalFound", 0)} for "{content.get("query", "")}": {paths}'
    if message.type == MessageType.ACTION_RESULT:
        return str(content.get("details", ""))
    if message.type == MessageType.CLARIFICATION:
        return str(content.get("question", ""))
    if message.type == MessageType.FILE:
        return f"Saved {content.get('path', '')}"
    if message.type == MessageType.SUMMARY:
        return str(content.get("summary", ""))
    return str(content.get("text", ""))


def run_steps(tool_calls: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A run's tool calls as its answer keeps them: the fields of the `tool_result` event, so the
    page renders a saved step with the code that renders a live one."""
    return [
        {
            "call_id": call.get("id", ""),
            "tool_name": call.get("name", ""),
            "tool_input": call.get("input", {}),
            "tool_output": call.get("output", ""),
            "status": call.get("status", ""),
            "duration_ms": call.get("duration_ms"),
            "iteration": call.get("iteration"),
            **({"reasoning": call["reasoning"]} if call.get("reasoning") else {}),
            **({"sources": call["sources"]} if call.get("sources") else {}),
            **({"tool_output_data": call["output_data"]} if call.get("output_data") else {}),
        }
        for call in tool_calls
    ]

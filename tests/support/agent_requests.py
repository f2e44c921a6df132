"""Reading what the loop sent a model: tool results and the numbers it gave passages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from apps.llm.types import LLMRequest, Role


def tool_payloads(request: LLMRequest) -> list[Any]:
    return [json.loads(message.content) for message in request.messages if message.role is Role.TOOL]


def numbered_items(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, list):
        for child in node:
            yield from numbered_items(child)
    elif isinstance(node, dict):
        if "n" in node:
            yield node
        for value in node.values():
            yield from numbered_items(value)


def number_of(request: LLMRequest, needle: str) -> int:
    """The n the model was given for the passage whose text contains `needle`."""
    for payload in tool_payloads(request):
        for item in numbered_items(payload):
            if needle in item.get("text", ""):
                return item["n"]
    raise AssertionError(f"no passage with {needle!r} was sent")

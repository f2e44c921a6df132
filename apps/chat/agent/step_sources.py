"""The passages a tool step returned, as links to their documents: what a step's result lists under
its output (`tool_result` events' `sources`), each opening `/files/{file_id}?chunk={chunk_id}`."""

from __future__ import annotations

from typing import Any

# A step listing more than this many passages shows the first ones: its output summary counts them all.
MAX_STEP_SOURCES = 20


def step_sources(payload: Any) -> list[dict[str, Any]]:
    """Numbered passages anywhere in a rendered tool result (`AgentContext.render`), first seen first,
    each once: its number, file and chunk (a read block's id is a chunk id too), name and location.
    A passage listed under its document (search results grouped by file) takes the document's file."""
    found: dict[int, dict[str, Any]] = {}
    pending: list[tuple[Any, dict[str, Any]]] = [(payload, {})]
    while pending and len(found) < MAX_STEP_SOURCES:
        value, inherited = pending.pop(0)
        if isinstance(value, list):
            pending[:0] = [(item, inherited) for item in value]
        elif isinstance(value, dict):
            fields = {**inherited, **{k: value[k] for k in ("file_id", "file_name") if k in value}}
            chunk_id = value.get("chunk_id", value.get("block_id"))
            if isinstance(value.get("n"), int) and isinstance(fields.get("file_id"), int) and chunk_id is not None:
                found.setdefault(
                    value["n"],
                    {
                        "n": value["n"],
                        "file_id": fields["file_id"],
                        "chunk_id": chunk_id,
                        "file_name": fields.get("file_name", ""),
                        "location": value.get("location", ""),
                    },
                )
            else:
                pending[:0] = [(item, fields) for item in value.values()]
    return list(found.values())

"""A minimal SSE reader for tests: events (id, type, data) and comment lines, as received."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Received:
    type: str  # the event type, or "comment" for a `: ...` line
    data: Any = None
    id: str | None = None


def parse_sse(lines: Iterable[str]) -> Iterator[Received]:
    fields: dict[str, str] = {}
    for line in lines:
        if line.startswith(":"):
            yield Received(type="comment", data=line[1:].strip())
        elif not line:
            if fields:
                yield Received(
                    type=fields.get("event", "message"),
                    data=json.loads(fields.get("data", "null")),
                    id=fields.get("id"),
                )
                fields = {}
        else:
            name, _, value = line.partition(":")
            fields[name] = value[1:] if value.startswith(" ") else value

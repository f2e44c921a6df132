"""How tool inputs, outputs and reasoning are cut for events and for the run's stored record."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

INPUT_VALUE_CHARS = 300


def json_value(value: Any) -> str:
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip_input(value: Any) -> Any:
    """Arguments as shown in events and stored on the run: long values cut, shape kept."""
    if isinstance(value, str):
        return clip(value, INPUT_VALUE_CHARS)
    if isinstance(value, Mapping):
        return {str(key): clip_input(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clip_input(item) for item in value[:20]]
    return value

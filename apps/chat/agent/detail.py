"""A tool's full structured output as the page shows it, beside the one-line summary.

The model's copy of a result leaves out text it already has (`seen_before`) and stops at the
context budget; a person expanding the step wants to see what the tool found all the same: for a
search, every document with its score and best snippets, each under the number the answer cites
it by. So the detail is made from the tool's own output, with long text cut and long lists
shortened, to keep events and the stored run small.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from apps.chat.agent.clipping import clip, json_value
from apps.chat.agent.context import Passage
from apps.llm.sources import describe_location

SNIPPET_CHARS = 300
VALUE_CHARS = 300
LIST_ITEMS = 20
# Said to the model in every result; the page has nothing to learn from it.
_OMITTED_KEYS = frozenset({"notice"})


def tool_detail(data: Any, *, number_of: Callable[[int], int | None]) -> Any:
    """`data` (a `ToolOutput.data`) as JSON-ready values; `number_of` gives a chunk's passage number."""
    if isinstance(data, Passage):
        return _passage(data, number_of(data.chunk_id))
    if isinstance(data, Mapping):
        return {
            str(key): tool_detail(value, number_of=number_of) for key, value in data.items() if key not in _OMITTED_KEYS
        }
    if isinstance(data, list | tuple):
        items = [tool_detail(item, number_of=number_of) for item in data[:LIST_ITEMS]]
        if len(data) > LIST_ITEMS:
            items.append(f"… {len(data) - LIST_ITEMS} more")
        return items
    if isinstance(data, str):
        return clip(data, VALUE_CHARS)
    if data is None or isinstance(data, bool | int | float):
        return data
    return json_value(data)


def _passage(passage: Passage, n: int | None) -> dict[str, Any]:
    detail: dict[str, Any] = {} if n is None else {"n": n}
    if not passage.in_document:
        detail.update(file_id=passage.file_id, file_name=passage.file_name, path=passage.path)
    detail["location"] = describe_location(passage.location)
    if passage.score is not None:
        detail["score"] = round(passage.score, 4)
    detail["snippet"] = clip(" ".join(passage.text.split()), SNIPPET_CHARS)
    return detail

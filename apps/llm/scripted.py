"""A test double that replays a script and records every request it received."""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

from apps.llm.base import stream_text
from apps.llm.types import (
    LLMRequest,
    LLMResponse,
    Message,
    StopReason,
    TextCallback,
    ToolCall,
    ToolSpec,
)

# A response to return, an exception to raise, or a callable that builds the response from the request.
ScriptStep: TypeAlias = LLMResponse | BaseException | Callable[[LLMRequest], LLMResponse]


_call_ids = itertools.count(1)


class ScriptExhaustedError(AssertionError):
    """An AssertionError so that code catching LLMError for fallbacks cannot hide a short script."""


class ScriptedProvider:
    def __init__(self, script: Iterable[ScriptStep] = (), *, model: str = "scripted") -> None:
        self.model = model
        self.requests: list[LLMRequest] = []
        self._script: deque[ScriptStep] = deque(script)
        self._lock = threading.Lock()  # agent loops may run in a worker thread while the test pushes

    def push(self, *steps: ScriptStep) -> None:
        with self._lock:
            self._script.extend(steps)

    @property
    def remaining(self) -> int:
        return len(self._script)

    def complete(
        self,
        *,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        on_text: TextCallback | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> LLMResponse:
        request = LLMRequest(
            messages=tuple(messages),
            tools=tuple(tools or ()),
            system=system,
            max_tokens=max_tokens,
            temperature=temperature,
            stream=on_text is not None,
            json_schema=json_schema,
        )
        with self._lock:
            self.requests.append(request)
            if not self._script:
                raise ScriptExhaustedError(f"scripted provider has no response for request #{len(self.requests)}")
            step = self._script.popleft()
        if isinstance(step, BaseException):
            raise step
        response = step if isinstance(step, LLMResponse) else step(request)
        # Like a provider whose tool calls come first: a tool-call turn's text is never streamed.
        if on_text is not None and response.text and not response.tool_calls:
            stream_text(response.text, on_text)
        return response if response.model else replace(response, model=self.model)


def text_response(text: str) -> LLMResponse:
    return LLMResponse(text=text)


def tool_call_response(*calls: tuple[str, Mapping[str, Any]], text: str = "") -> LLMResponse:
    """`tool_call_response(("search_folder", {"query": "w2"}))`.

    Ids are unique per process, as real ones are, so code pairing results by id is really tested.
    """
    return LLMResponse(
        text=text,
        tool_calls=tuple(
            ToolCall(id=f"call_{next(_call_ids)}", name=name, arguments=dict(arguments)) for name, arguments in calls
        ),
        stop_reason=StopReason.TOOL_USE,
    )

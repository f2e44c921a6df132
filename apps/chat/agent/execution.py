"""The tool calls of the loop's turns: announced, run concurrently, reported and recorded.

Each call of a turn is announced (`tool_call`; the first carries the turn's text as reasoning),
runs in its own thread with the per-tool timeout (at most `max_calls_per_turn` of them; the rest
are refused), and comes back as a `tool_result` event (its summary, and its structured output in
`tool_output_data`, `detail`) and a result message paired to its call id.
Results pass through the run's `AgentContext`, which numbers and deduplicates their passages; the
last carries the research trace so far, so whichever turn answers knows what was tried. The
executor keeps what the run's metrics need of its calls, including model tokens a tool spent.
"""

from __future__ import annotations

import contextvars
import json
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any

from django.db import connections
from django.utils.translation import get_language, ngettext, override

from apps.chat.agent.clipping import clip, clip_input, json_value
from apps.chat.agent.context import AgentContext, TraceEntry
from apps.chat.agent.detail import tool_detail
from apps.chat.agent.outcome import AgentLimits
from apps.chat.agent.registry import ToolContext, ToolKind, ToolOutput, ToolRegistry
from apps.chat.agent.step_sources import step_sources
from apps.chat.events import RunEvents
from apps.llm.types import Message, ToolCall, Usage

SUMMARY_CHARS = 200
REASONING_CHARS = 500


class ToolExecutor:
    def __init__(self, *, tools: ToolRegistry, context: AgentContext, events: RunEvents, limits: AgentLimits) -> None:
        self.tools = tools
        self.context = context
        self.events = events
        self.limits = limits
        self.records: list[dict[str, Any]] = []  # every call made, as the run's `tool_calls`
        self.kinds: Counter[ToolKind] = Counter()
        self.llm_calls = 0  # model calls the tools made themselves (rewrite_query)
        self.usage = Usage()

    def run(
        self, calls: Sequence[ToolCall], *, reasoning: str, iteration: int, tool_context: ToolContext, remaining: float
    ) -> list[Message]:
        """Runs one turn's `calls` within `remaining` seconds; their results, in the calls' order."""
        for phase in dict.fromkeys(self._phase(call.name) for call in calls):
            self.events.status(phase, iteration=iteration)
        for index, call in enumerate(calls):
            data: dict[str, Any] = {
                "call_id": call.id,
                "tool_name": call.name,
                "tool_input": clip_input(call.arguments),
                "iteration": iteration,
                "status": "running",
            }
            if index == 0 and reasoning.strip():
                data["reasoning"] = clip(reasoning.strip(), REASONING_CHARS)
            self.events.emit("tool_call", data)

        runnable = calls[: self.limits.max_calls_per_turn]
        budget = min(self.limits.tool_timeout_seconds, remaining)
        context = replace(tool_context, deadline=time.monotonic() + budget, passages=tuple(self.context.passages))
        pool = ThreadPoolExecutor(max_workers=len(runnable), thread_name_prefix="agent-tool")
        try:
            # Each in a copy of this thread's context, so a tool's model calls are metered for the run.
            futures = [
                pool.submit(contextvars.copy_context().run, _execute, self.tools, call, context, get_language())
                for call in runnable
            ]
            wait(futures, timeout=budget)
        finally:
            # A tool still running past its timeout is left to finish on its own; nobody waits.
            pool.shutdown(wait=False, cancel_futures=True)
        return [
            self._result(
                call,
                *self._output(call, futures, index, budget),
                iteration=iteration,
                last=index == len(calls) - 1,
                reasoning=clip(reasoning.strip(), REASONING_CHARS) if index == 0 else "",
            )
            for index, call in enumerate(calls)
        ]

    def _output(
        self, call: ToolCall, futures: list[Future[tuple[ToolOutput, int]]], index: int, budget: float
    ) -> tuple[ToolOutput, int]:
        if index >= len(futures):
            limit = self.limits.max_calls_per_turn
            return ToolOutput.error(f"not run: at most {limit} tool calls run per turn"), 0
        if futures[index].done():
            return futures[index].result()
        return ToolOutput.error(f"{call.name} timed out after {budget:g} s"), round(budget * 1000)

    def _result(
        self, call: ToolCall, output: ToolOutput, duration_ms: int, *, iteration: int, last: bool, reasoning: str
    ) -> Message:
        payload, stats = self.context.render(output.data)
        if stats.omitted:
            payload["context_full"] = (
                f"{stats.omitted} more passages were left out: the context budget is spent. Answer with what you have."
            )
        if output.trace is not None:
            self.context.record(
                TraceEntry(iteration=iteration, tool=call.name, attempt=output.trace, hits=stats.hits, new=stats.new)
            )
        if last and self.context.trace and isinstance(payload, dict):
            # The turn after these results may be the answer: it sees what was tried, not only what was found.
            payload["research_trace"] = [entry.line() for entry in self.context.trace]
        if output.usage is not None:
            self.llm_calls += 1
            self.usage += output.usage
        tool = self.tools.get(call.name)
        self.kinds[tool.kind if tool else ToolKind.OTHER] += 1
        fresh = ngettext("(%(count)s new)", "(%(count)s new)", stats.new) % {"count": stats.new}
        summary = clip(output.summary + (f" {fresh}" if stats.hits else ""), SUMMARY_CHARS)
        status = "error" if output.is_error else "complete"
        tool_input = clip_input(call.arguments)
        # The passages it found, each a link to its document page (kept, so a reload shows them too).
        sources = step_sources(payload)
        detail = tool_detail(output.data, number_of=self.context.number_of)
        self.records.append(
            {
                "id": call.id,
                "iteration": iteration,
                "name": call.name,
                "input": tool_input,
                "output": summary,
                "output_data": detail,
                "status": status,
                "duration_ms": duration_ms,
                # Kept so the saved answer shows the step as its `tool_call` event did.
                **({"reasoning": reasoning} if reasoning else {}),
                **({"sources": sources} if sources else {}),
            }
        )
        self.events.emit(
            "tool_result",
            {
                "call_id": call.id,
                "tool_name": call.name,
                "tool_input": tool_input,
                "tool_output": summary,
                "tool_output_data": detail,
                "status": status,
                "duration_ms": duration_ms,
                "iteration": iteration,
                "sources": sources,
            },
        )
        content = json.dumps(payload, ensure_ascii=False, default=json_value)
        return Message.tool_result(tool_call_id=call.id, content=content, is_error=output.is_error)

    def _phase(self, name: str) -> str:
        tool = self.tools.get(name)
        return tool.phase if tool else "working"


def _execute(tools: ToolRegistry, call: ToolCall, context: ToolContext, language: str | None) -> tuple[ToolOutput, int]:
    started = time.perf_counter()
    try:
        # Its summary is shown to the run's owner; the run's language stays in the thread that started it.
        with override(language):
            return tools.execute(call, context), round((time.perf_counter() - started) * 1000)
    finally:
        # Pool threads end with their turn; a connection they opened would otherwise leak.
        connections.close_all()

"""The bounded research loop: the model calls tools until it answers, and can never run away.

Each turn the provider sees the tools and streams: text deltas go to the client as they arrive
(`text_delta`), since any turn may turn out to be the answer. Providers stop forwarding text once a
tool call starts; text that came before it (a preamble) is retracted with `text_reset` and kept as
the call's reasoning. A tool may take the answer as an argument (`answer_argument`, the inbox's
respond_to_user, seed 001's generate_answer): its text streams as the model writes the call, and
when the call succeeds it is the answer (if it fails, the text is retracted); a successful call
that leaves it blank has the answer written from what was gathered. A tool may instead end the
loop with a fixed text (`ends_loop_with`, the inbox's handoff_to_organize): once a call of it
succeeds, that text is the answer, with no further model turn. The calls a turn makes run
concurrently (`execution`), each in its own thread with the per-tool timeout, and their results
go back paired to the call ids, the last with the research trace so far, so whichever turn
answers knows what was tried. Limits:
`max_iterations` model turns with tools (then a final answer is forced from what was gathered,
and the answer says so), a total timeout, a per-tool timeout. Tool rounds stop
`answer_reserve_seconds` before the total timeout; a run still researching then is answered from
what it gathered (and says so): by the model when it writes in time, otherwise at once by the
offline extractive answerer (`gathered`), so a timed-out run answers within its limit. When the
provider fails or the loop breaks, `AgentFallbackError` tells the caller to answer another way and
hands it the passages gathered so far, unless answer text already streamed: then the error itself
propagates.

Model calls also run in a worker thread, so the total timeout holds even while a provider hangs.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeoutError

from django.utils import translation

from apps.chat.agent.context import AgentContext
from apps.chat.agent.execution import ToolExecutor
from apps.chat.agent.gathered import gathered_answer
from apps.chat.agent.outcome import (
    AgentFallbackError,
    AgentLimits,
    AgentOutcome,
    AgentProgress,
    Finish,
    progress_attach,
)
from apps.chat.agent.prompts import (
    AGENT_SYSTEM_PROMPT,
    FINAL_ANSWER_SYSTEM_PROMPT,
    ITERATION_LIMIT_NOTE,
    TIMEOUT_NOTE,
    final_answer_prompt,
    loop_system_prompt,
)
from apps.chat.agent.registry import ToolContext, ToolKind, ToolRegistry
from apps.chat.agent.turn_text import TurnText
from apps.chat.cancel import RunCancelled
from apps.chat.events import RunEvents
from apps.chat.prompts import HistoryTurn, NumberedSource, standard_messages
from apps.core.logging import redact
from apps.llm.base import LLMError, LLMProvider, LLMTimeoutError, stream_text
from apps.llm.factory import get_llm
from apps.llm.failures import REASONS, FailureKind, failure_kind
from apps.llm.types import LLMResponse, Message, StopReason, TextDelta, ToolCall, ToolSpec, Usage

logger = logging.getLogger(__name__)

LOOP_FAILED = "The agent ran into a problem."


class _OutOfTime(Exception):
    """A deadline passed before the model or the tools were done (research, or the answer's)."""


def agent_loop_run(
    *,
    question: str,
    history: Sequence[HistoryTurn],
    tools: ToolRegistry,
    tool_context: ToolContext,
    events: RunEvents,
    system_prompt: str = AGENT_SYSTEM_PROMPT,
    final_system_prompt: str = FINAL_ANSWER_SYSTEM_PROMPT,
    limits: AgentLimits | None = None,
    llm: LLMProvider | None = None,
    attached: Sequence[NumberedSource] = (),
) -> AgentOutcome:
    """Research `question` with `tools` until answered. Publishes status, tool_call, tool_result
    and text_delta events; the caller persists the answer and publishes message/done.
    `attached`: sources the question brought (its images), given with it as [1].. ."""
    loop = _AgentLoop(
        question=question,
        history=history,
        tools=tools,
        tool_context=tool_context,
        events=events,
        system_prompt=system_prompt,
        final_system_prompt=final_system_prompt,
        limits=limits or AgentLimits.from_settings(),
        llm=llm or get_llm("agent"),
        attached=attached,
    )
    return loop.run()


class _AgentLoop:
    def __init__(
        self,
        *,
        question: str,
        history: Sequence[HistoryTurn],
        tools: ToolRegistry,
        tool_context: ToolContext,
        events: RunEvents,
        system_prompt: str,
        final_system_prompt: str,
        limits: AgentLimits,
        llm: LLMProvider,
        attached: Sequence[NumberedSource],
    ) -> None:
        self.question = question
        self.history = history
        self.tools = tools
        self.tool_context = tool_context
        self.events = events
        self.system_prompt = loop_system_prompt(
            base=system_prompt, max_iterations=limits.max_iterations, tools=tools.specs()
        )
        self.final_system_prompt = final_system_prompt
        self.limits = limits
        self.llm = llm
        self.context = AgentContext(max_tokens=limits.context_max_tokens, attached=attached)
        self.executor = ToolExecutor(tools=tools, context=self.context, events=events, limits=limits)
        self.iterations = 0
        self.llm_calls = 0  # the loop's own model turns; tools count theirs in the executor
        self.usage = Usage()
        self.model = ""
        self.started = time.monotonic()
        self.deadline = self.started + limits.total_timeout_seconds
        self.research_deadline = self.started + limits.research_seconds
        self.answered_offline = False
        self.text = TurnText(events=events, iteration=lambda: self.iterations)
        self.truncated = False

    def run(self) -> AgentOutcome:
        try:
            return self._research()
        except AgentFallbackError:
            raise
        except RunCancelled as exc:  # the owner stopped the run: no fallback, what it did is kept
            progress_attach(exc, self._progress(finish=None))
            exc.citations = self.context.citations(self.events.text_so_far())
            raise
        except LLMError as exc:
            # Failed after its retries (or skipped by its circuit breaker): the run answers offline
            # from what was gathered, and text a broken stream showed is taken back first.
            kind = failure_kind(exc)
            logger.warning("run %s: agent model failed (%s): %s", self.tool_context.run_id, kind, redact(repr(exc)))
            self.text.retract()
            raise self._fallback(str(REASONS[kind]), model_failure=kind) from exc
        except Exception as exc:  # whatever broke, the question still gets an answer
            if self.text.emitted:
                progress_attach(exc, self._progress(finish=None))
                raise
            logger.exception("run %s: agent loop failed", self.tool_context.run_id)
            raise self._fallback(LOOP_FAILED) from exc

    def _research(self) -> AgentOutcome:
        try:
            return self._tool_rounds()
        except _OutOfTime:
            return self._forced_answer(Finish.TIMEOUT)

    def _tool_rounds(self) -> AgentOutcome:
        messages = standard_messages(history=self.history, question=self.question, sources=self.context.attached)
        specs = self.tools.specs()
        # Before the first model turn, which may take a second or two: the user sees the run has begun.
        self.events.status("planning", max_iterations=self.limits.max_iterations, tools=len(specs))
        while self.iterations < self.limits.max_iterations:
            self.iterations += 1
            response = self._complete(
                messages=messages, tools=specs, system=self.system_prompt, until=self.research_deadline
            )
            if not response.tool_calls:
                if not response.text.strip():
                    self.text.retract()
                    return self._forced_answer(Finish.EMPTY_ANSWER)
                return self._answer(response.text)
            answer = next((call for call in response.tool_calls if self._answer_argument(call.name)), None)
            if answer is None or answer.id != self.text.call:
                self.text.retract()  # a preamble, not an answer
            messages.append(response.as_message())
            results = self._run_tools(response.tool_calls, reasoning=response.text)
            messages.extend(results)
            if answer is not None and not results[response.tool_calls.index(answer)].is_error:
                return self._answer_call(answer)
            self.text.retract()  # an answering call failed: its streamed text is taken back
            ending = self._ending(response.tool_calls, results)
            if ending:
                return self._answer(ending)
            # Nothing ended the loop: the model takes the next turn, with these results.
        return self._forced_answer(Finish.ITERATION_LIMIT)

    def _answer_argument(self, name: str) -> str:
        tool = self.tools.get(name)
        return tool.answer_argument if tool else ""

    def _answer_call(self, call: ToolCall) -> AgentOutcome:
        """A successful answering call: its answer argument is the answer, citing also the passages
        its citations argument lists; left blank, the answer is written from what was gathered."""
        tool = self.tools.get(call.name)
        assert tool is not None  # only a registered tool's call answers
        listed = call.arguments.get(tool.citations_argument) if tool.citations_argument else None
        also = [n for n in listed if isinstance(n, int)] if isinstance(listed, list) else []
        text = str(call.arguments.get(tool.answer_argument) or "")
        if not text.strip():
            self.text.retract()
            return self._forced_answer(Finish.ANSWER_REQUESTED, also=also)
        return self._answer(text, also=also)

    def _ending(self, calls: Sequence[ToolCall], results: Sequence[Message]) -> str:
        """The fixed answer of the first call that succeeded and whose tool ends the loop, if any."""
        for call, result in zip(calls, results, strict=True):
            tool = self.tools.get(call.name)
            if tool is not None and tool.ends_loop_with and not result.is_error:
                return tool.ends_loop_with
        return ""

    # -- model calls -------------------------------------------------------------------------------
    def _complete(
        self, *, messages: Sequence[Message], tools: Sequence[ToolSpec] | None, system: str, until: float
    ) -> LLMResponse:
        """One model turn, streamed: its text reaches the events through `_on_text` as it is written.

        A turn still running at `until` is abandoned, unless it is writing its answer: the time
        kept back after the research deadline is for that answer, so it may use it.
        """
        self.events.raise_if_cancelled()  # a tool boundary: the turn after the tools ran
        if until - time.monotonic() <= 0:
            raise self._out_of_time()
        turn = self.text.begin_turn()
        # Django keeps the active language per thread, not in the context: the offline answerer's
        # sentences are written on the call's thread, in the run's language too.
        language = translation.get_language()

        def complete() -> LLMResponse:
            with translation.override(language):
                return self.llm.complete(
                    messages=list(messages),
                    tools=tools,
                    system=system,
                    on_text=lambda delta: self.text.on_text(delta, turn=turn),
                )

        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent-llm")
        # In a copy of this thread's context: the call is metered for the run (`usage_context`).
        future = pool.submit(contextvars.copy_context().run, complete)
        pool.shutdown(wait=False)
        self.llm_calls += 1
        try:
            response = future.result(timeout=until - time.monotonic())
        except FuturesTimeoutError:
            response = self._late_turn(future)
        self.usage += response.usage
        self.model = response.model or self.model
        self.truncated = response.stop_reason is StopReason.MAX_TOKENS  # the answering turn's is what counts
        return response

    def _late_turn(self, future: Future[LLMResponse]) -> LLMResponse:
        """A turn past its deadline: one writing its answer may go on until the total timeout;
        any other is abandoned, and what it still writes goes nowhere."""
        if self.text.streamed:
            try:
                return future.result(timeout=max(0.0, self.deadline - time.monotonic()))
            except FuturesTimeoutError:
                pass
        self.text.abandon_turn()
        raise self._out_of_time()

    def _answer(self, text: str, *, also: Sequence[int] = ()) -> AgentOutcome:
        if self.text.call and self.text.shown() != text:  # a call's argument, misread while streaming
            self.text.retract()
        if not self.text.streamed:  # a provider that does not stream (offline planners)
            stream_text(text, self.text.on_text)
        self.events.flush_text()
        return self._outcome(text, Finish.ANSWERED, also=also)

    def _forced_answer(self, finish: Finish, *, also: Sequence[int] = ()) -> AgentOutcome:
        """Answer from the gathered passages and the search trace, with no tools offered: forced
        by a limit, or asked for by the model (`Finish.ANSWER_REQUESTED`).

        A fresh prompt rather than the tool-call history: providers refuse tool-use turns in a
        request that declares no tools, and the context is the deduplicated, budgeted view anyway.
        """
        forced = finish is not Finish.ANSWER_REQUESTED
        self.events.status("generating", iteration=self.iterations, forced=forced, reason=finish.value)
        self.text.announce = False
        messages = standard_messages(history=self.history, question=self.question, sources=[])
        stopped = {
            Finish.ITERATION_LIMIT: f"limit of {self.limits.max_iterations} tool rounds reached",
            Finish.TIMEOUT: f"time limit of {self.limits.total_timeout_seconds:g} s nearly reached",
            Finish.ANSWER_REQUESTED: "the research is complete",
        }.get(finish, "the model gave no answer")
        trace = self.context.trace_text()
        prompt = final_answer_prompt(
            question=self.question, sources=self.context.sources(), trace=trace, stopped=stopped
        )
        messages[-1] = Message.user(prompt)
        try:
            response = self._complete(
                messages=messages, tools=None, system=self.final_system_prompt, until=self.deadline
            )
        except _OutOfTime:
            # No time is left for the model: the gathered passages answer, at once.
            self.answered_offline = True
            response = gathered_answer(
                question=self.question,
                passages=self.context.sources(),
                trace=trace,
                stopped=stopped,
                on_text=self.text.on_text,
            )
        text = response.text
        if not text.strip():
            raise self._fallback("the model gave no final answer")
        notes = {
            Finish.ITERATION_LIMIT: ITERATION_LIMIT_NOTE % {"limit": self.limits.max_iterations},
            Finish.TIMEOUT: TIMEOUT_NOTE % {"limit": f"{self.limits.total_timeout_seconds:g}"},
        }
        if finish in notes:
            note = f"\n\n{notes[finish]}"
            self.text.on_text(TextDelta(text=note))
            text += note
        self.events.flush_text()
        return self._outcome(text, finish, also=also)

    # -- tools -------------------------------------------------------------------------------------
    def _run_tools(self, calls: Sequence[ToolCall], *, reasoning: str) -> list[Message]:
        # A call carrying the answer (`answer_argument`, already streamed) may use the answer's time.
        remaining = (self.deadline if self.text.emitted else self.research_deadline) - time.monotonic()
        if remaining <= 0:
            raise self._out_of_time()
        return self.executor.run(
            calls, reasoning=reasoning, iteration=self.iterations, tool_context=self.tool_context, remaining=remaining
        )

    # -- results -----------------------------------------------------------------------------------
    def _out_of_time(self) -> Exception:
        """What a passed deadline raises: `_OutOfTime`, to answer from what was gathered; or, once
        answer text reached the user (it cannot be taken back to answer another way), the timeout."""
        if self.text.emitted:
            limit = self.limits.total_timeout_seconds
            return LLMTimeoutError(f"the agent's total timeout of {limit:g} s passed while answering")
        return _OutOfTime()

    def _fallback(self, reason: str, *, model_failure: FailureKind | None = None) -> AgentFallbackError:
        return AgentFallbackError(
            reason, progress=self._progress(finish=None), passages=self.context.passages, model_failure=model_failure
        )

    def _outcome(self, text: str, finish: Finish, *, also: Sequence[int] = ()) -> AgentOutcome:
        return AgentOutcome(
            text=text,
            citations=self.context.citations(text, also=also),
            model=self.model or self.llm.model,
            finish=finish,
            progress=self._progress(finish=finish),
            context=self.context,
            truncated=self.truncated,
        )

    def _progress(self, *, finish: Finish | None) -> AgentProgress:
        records, kinds = self.executor.records, self.executor.kinds
        usage = self.usage + self.executor.usage
        metrics = {
            "iterations": self.iterations,
            "searches": kinds[ToolKind.SEARCH],
            "reads": kinds[ToolKind.READ],
            "calls": len(records),
            "tool_errors": sum(record["status"] == "error" for record in records),
            "llm_calls": self.llm_calls + self.executor.llm_calls,
            "tokens": usage.as_metrics(),
            "duration_ms": round((time.monotonic() - self.started) * 1000),
            "passages": len(self.context.passages),
            "context_tokens": self.context.tokens_used,
            "search_trace": [entry.line() for entry in self.context.trace],
            "finish": finish.value if finish else "fallback",
            "forced_final_answer": finish is not None and finish not in (Finish.ANSWERED, Finish.ANSWER_REQUESTED),
            "answered_offline": self.answered_offline,
            "fallback_used": finish is None,
            "text_resets": self.text.resets,
            "tool_usage": dict(Counter(record["name"] for record in records)),
        }
        return AgentProgress(iterations=self.iterations, tool_calls=tuple(records), metrics=metrics, usage=usage)

"""Agent mode for folder chat: the research loop over the folder's tools, standard mode as fallback.

`run_question`, `outcome_result` and `standard_fallback` are the parts every agent runner shares
(the inbox runner uses them too). With AGENT_MODE_ENABLED off (seed 001's master switch) a folder
chat's agent run answers in standard mode and says so; the inbox's agents are not this mode and
keep running.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from django.conf import settings

from apps.chat.agent.loop import AgentFallbackError, AgentOutcome, agent_loop_run
from apps.chat.agent.outcome import AgentLimits, AgentProgress, progress_attach
from apps.chat.agent.registry import ToolContext
from apps.chat.agent.tools import folder_tools
from apps.chat.answering import Answer, answer_supplement, cite_again, needs_citations
from apps.chat.events import RunEvents
from apps.chat.history import conversation_history_for_prompt
from apps.chat.image_reading import question_images_read
from apps.chat.models import AgentRun, Message
from apps.chat.prompts import STANDARD_SYSTEM_PROMPT, HistoryTurn, NumberedSource, standard_messages
from apps.chat.standard import chat_run_standard
from apps.chat.types import RunResult
from apps.llm.factory import get_llm

logger = logging.getLogger(__name__)

AGENT_MODE_OFF = "Agent mode is turned off on this server, so this answer comes from standard mode (one search)."
AGENT_MODE_OFF_REASON = "Agent mode is turned off on this server."


def chat_run_agent(*, run: AgentRun, events: RunEvents) -> RunResult:
    if not settings.AGENT_MODE_ENABLED:
        return _agent_mode_off(run=run, events=events)
    question_message = run_question(run)
    question = str(question_message.content.get("text", ""))
    conversation = run.conversation
    history = conversation_history_for_prompt(conversation=conversation, before_message_id=question_message.pk)
    images = question_images_read(question=question_message, events=events)
    try:
        outcome = agent_loop_run(
            question=question,
            history=history,
            tools=folder_tools(folder_id=conversation.live_folder_id),
            tool_context=ToolContext(
                folder_id=conversation.live_folder_id, user_id=run.owner_id, question=question, run_id=str(run.pk)
            ),
            events=events,
            limits=AgentLimits.from_settings(max_iterations=run.max_iterations),
            attached=images.sources,
        )
    except AgentFallbackError as exc:
        return standard_fallback(run=run, events=events, error=exc, metrics={"agent": exc.progress.metrics})
    sources = outcome.context.sources()
    result = _cited(
        outcome_result(outcome), run=run, events=events, question=question, history=history, sources=sources
    )
    text, consulted = answer_supplement(
        text=result.text,
        citations=result.citations,
        sources=sources,
        searched=[*_queries(outcome.progress), question],
        on_text=events.text,
    )
    events.flush_text()
    text = images.with_note(text=text, events=events)
    return dataclasses.replace(result, text=text, sources_consulted=consulted, usage=result.usage + images.usage)


def _agent_mode_off(*, run: AgentRun, events: RunEvents) -> RunResult:
    """Standard mode's answer, after a `notice` saying why, and with that line above the answer.

    Decided when the run executes, not when it was asked: a queued or regenerated agent run
    follows the switch as it is now."""
    events.emit("notice", {"kind": "agent_mode_disabled", "message": AGENT_MODE_OFF})
    result = chat_run_standard(run=run, events=events)
    return dataclasses.replace(
        result,
        notice=" ".join(filter(None, [AGENT_MODE_OFF, result.notice])),
        fallback_reason=result.fallback_reason or AGENT_MODE_OFF_REASON,
        metrics={**result.metrics, "agent_mode_disabled": True},
    )


def _cited(
    result: RunResult,
    *,
    run: AgentRun,
    events: RunEvents,
    question: str,
    history: list[HistoryTurn],
    sources: list[NumberedSource],
) -> RunResult:
    """An answer citing none of the passages the loop gathered is asked once more, from them."""
    llm = get_llm("agent")
    answer = Answer(text=result.text, citations=result.citations, model=result.model, truncated=result.truncated)
    if not needs_citations(llm=llm, answer=answer, sources=sources):
        return result
    again = cite_again(
        llm=llm,
        messages=standard_messages(history=history, question=question, sources=sources),
        system=STANDARD_SYSTEM_PROMPT,
        answer=answer,
        sources=sources,
        events=events,
        run_id=run.pk,
    )
    return dataclasses.replace(
        result,
        text=again.text,
        citations=again.citations,
        truncated=again.truncated,
        usage=result.usage + again.usage,
        metrics={**result.metrics, "llm_calls": result.metrics.get("llm_calls", 0) + 1, "citation_retry": True},
    )


def run_question(run: AgentRun) -> Message:
    """The run's question. The tools' only authorization is the folder id: `run_execute` has
    already checked that the asker still has a role on the run's folder."""
    if run.question is None:
        raise ValueError(f"run {run.pk} has no question")
    return run.question


def outcome_result(outcome: AgentOutcome, *, metrics: dict[str, Any] | None = None) -> RunResult:
    """An answered loop as the run's result; `metrics` are added to the loop's own."""
    progress = outcome.progress
    return RunResult(
        text=outcome.text,
        citations=outcome.citations,
        model=outcome.model,
        usage=progress.usage,
        metrics={**progress.metrics, **(metrics or {})},
        iterations=progress.iterations,
        tool_calls=progress.tool_calls,
        truncated=outcome.truncated,
    )


def standard_fallback(
    *, run: AgentRun, events: RunEvents, error: AgentFallbackError, metrics: dict[str, Any]
) -> RunResult:
    """Standard mode's answer from what the failed loop gathered plus one search, counting what the
    loop did and spent; `metrics` go with it."""
    logger.warning("run %s: agent fell back to standard mode: %s", run.pk, error.reason)
    events.status("fallback", reason=error.reason, gathered=len(error.passages))
    gathered = [passage.source() for passage in error.passages]
    progress = error.progress
    try:
        result = chat_run_standard(
            run=run,
            events=events,
            gathered=gathered,
            searched=_queries(progress),
            model_failure=error.model_failure,
        )
    except Exception as exc:
        progress_attach(exc, progress)
        raise
    return dataclasses.replace(
        result,
        usage=result.usage + progress.usage,
        metrics={**result.metrics, "fallback_used": True, **metrics},
        iterations=progress.iterations,
        tool_calls=progress.tool_calls,
        fallback_reason=error.reason,
    )


def _queries(progress: AgentProgress) -> list[str]:
    """The searches the loop ran, for an answer that found nothing to say what was searched."""
    arguments = [call.get("input") for call in progress.tool_calls]
    return [str(given["query"]) for given in arguments if isinstance(given, dict) and given.get("query")]

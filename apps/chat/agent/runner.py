"""Agent mode for folder chat: the research loop over the folder's tools, standard mode as fallback."""

from __future__ import annotations

import dataclasses
import logging

from django.conf import settings

from apps.chat.agent.loop import AgentFallbackError, agent_loop_run
from apps.chat.agent.registry import ToolContext
from apps.chat.agent.tools import folder_tools
from apps.chat.events import RunEvents
from apps.chat.models import AgentRun
from apps.chat.selectors import conversation_history
from apps.chat.standard import chat_run_standard
from apps.chat.types import RunResult
from apps.core.api import ApplicationError
from apps.library.models import Folder
from apps.llm.types import Usage

logger = logging.getLogger(__name__)


def chat_run_agent(*, run: AgentRun, events: RunEvents) -> RunResult:
    if run.question is None:
        raise ValueError(f"run {run.pk} has no question")
    question = str(run.question.content.get("text", ""))
    conversation = run.conversation
    # The tools' only authorization is the folder id; make sure it is the asker's folder.
    if not Folder.objects.filter(pk=conversation.folder_id, owner_id=run.owner_id).exists():
        raise ApplicationError("Folder not found.")
    history = conversation_history(
        conversation_id=conversation.pk,
        before_message_id=run.question.pk,
        max_tokens=settings.CHAT_HISTORY_MAX_TOKENS,
        max_messages=settings.CHAT_HISTORY_MAX_MESSAGES,
    )
    try:
        outcome = agent_loop_run(
            question=question,
            history=history,
            tools=folder_tools(folder_id=conversation.folder_id),
            tool_context=ToolContext(
                folder_id=conversation.folder_id, user_id=run.owner_id, question=question, run_id=str(run.pk)
            ),
            events=events,
        )
    except AgentFallbackError as exc:
        logger.warning("run %s: agent fell back to standard mode: %s", run.pk, exc.reason)
        events.status("fallback", reason=exc.reason)
        result = chat_run_standard(run=run, events=events)
        progress = exc.progress
        return dataclasses.replace(
            result,
            usage=Usage(
                input_tokens=result.usage.input_tokens + progress.usage.input_tokens,
                output_tokens=result.usage.output_tokens + progress.usage.output_tokens,
            ),
            metrics={**result.metrics, "fallback_used": True, "agent": progress.metrics},
            iterations=progress.iterations,
            tool_calls=progress.tool_calls,
            fallback_reason=exc.reason,
        )
    progress = outcome.progress
    return RunResult(
        text=outcome.text,
        citations=outcome.citations,
        model=outcome.model,
        usage=progress.usage,
        metrics=progress.metrics,
        iterations=progress.iterations,
        tool_calls=progress.tool_calls,
    )

"""Run mode "inbox": route the message, then answer it the way its intent calls for (seed 002).

- confirm / reject: accept or decline the pending suggestion(s) the user is answering, or else
  remember or decline the guideline line last proposed ("Shall I remember that?"); no agent.
- save: pasted text or a link becomes a note in inbox/; no agent.
- chat: a short reply, or a clarifying question when the router was unsure; no agent.
- query: the query agent; when it hands off, the organize agent takes the files it found.
- organize: the organize agent, over the files the message means.

Typed messages (search_result, suggestion, action_result, file, clarification) are written as
they happen and published as `message` events; `run_execute` then saves the text reply.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from apps.chat.agent.loop import AgentFallbackError, AgentOutcome, agent_loop_run
from apps.chat.agent.registry import ToolContext
from apps.chat.agent.runner import outcome_result, run_question, standard_fallback
from apps.chat.events import RunEvents
from apps.chat.history import conversation_history_for_prompt
from apps.chat.inbox_conversations import inbox_message_add
from apps.chat.messages import message_payload
from apps.chat.models import AgentRun, Conversation, Message, MessageType
from apps.chat.prompts import HistoryTurn
from apps.chat.types import RunResult
from apps.core.api import ApplicationError
from apps.inbox.meant import paths_meant, target_of
from apps.inbox.offline import OfflineQueryPlanner
from apps.inbox.organize_agent import (
    BATCH_SIZE,
    organize_agent_available,
    organize_agent_run,
    organize_task,
)
from apps.inbox.query_agent import QUERY_SYSTEM_PROMPT, query_tools
from apps.inbox.router import Route, route_message
from apps.inbox.save import inbox_note_save
from apps.inbox.selectors import inbox_files, pending_suggestions, recent_context
from apps.inbox.state import MAX_CARDS as MAX_CHOSEN_CARDS
from apps.inbox.state import InboxRunState
from apps.inbox.told import moves_as_told, told_text
from apps.library.models import Folder
from apps.library.selectors import folder_files_get_by_path
from apps.llm.extractive_router import Intent, classify_intent
from apps.llm.factory import get_model
from apps.organize.decisions import suggestion_respond
from apps.organize.models import OrganizationSuggestion
from apps.organize.proposals import PROPOSAL_KEY, guideline_proposal_pending, guideline_proposal_respond
from apps.organize.services import SuggestOutcome, file_suggest

logger = logging.getLogger(__name__)

NO_MODEL = "inbox-router"
MAX_CARDS = 5  # found files shown when the agent chose none
_THANKS = re.compile(r"\b(thanks|thank you|thx|cheers)\b", re.IGNORECASE)
GREETING = (
    "Hi! I can find files and answer questions about them, and I suggest where new inbox files belong. "
    "Try “find my W-2” or “organize my inbox”."
)
UNSURE = "I'm not sure what you'd like me to do. Should I look for something, or organize your inbox?"
NOTHING_PENDING = "There's nothing waiting for a yes or no right now. What would you like to do?"
OPTIONS = ("What's in my inbox?", "Organize my inbox")


@dataclass(frozen=True)
class Turn:
    run: AgentRun
    events: RunEvents
    conversation: Conversation
    question: Message
    text: str
    route: Route
    pending: list[OrganizationSuggestion]
    proposal: Message | None = None  # an unanswered guideline line, when no suggestion is pending

    @property
    def run_id(self) -> str:
        return str(self.run.pk)

    def state(self) -> InboxRunState:
        return InboxRunState(conversation=self.conversation, user_id=self.run.owner_id, run_id=self.run_id)

    def history(self) -> list[HistoryTurn]:
        return conversation_history_for_prompt(conversation=self.conversation, before_message_id=self.question.pk)

    def post(self, *, type: str, content: dict[str, Any], agent: str) -> Message:
        message = inbox_message_add(
            conversation=self.conversation, type=type, content=content, metadata={"agent": agent, "run_id": self.run_id}
        )
        self.events.emit("message", message_payload(message))
        return message


def chat_run_inbox(*, run: AgentRun, events: RunEvents) -> RunResult:
    question = run_question(run)
    conversation = run.conversation
    text = str(question.content.get("text", ""))
    pending = pending_suggestions(conversation=conversation)
    proposal = None if pending else guideline_proposal_pending(conversation_id=conversation.pk)
    route = route_message(
        text=text,
        pending=_describe(pending) if pending else _describe_proposal(proposal),
        context=recent_context(conversation_id=conversation.pk, before_message_id=question.pk),
    )
    # Stored before anything else can fail: every message keeps how it was routed and how fast.
    Message.objects.filter(pk=question.pk).update(metadata={**question.metadata, "route": route.as_metadata()})
    events.status(
        "routed",
        intent=route.intent.value,
        confidence=route.confidence,
        method=route.method,
        latency_ms=round(route.latency_ms, 3),
    )
    turn = Turn(
        run=run,
        events=events,
        conversation=conversation,
        question=question,
        text=text,
        route=route,
        pending=pending,
        proposal=proposal,
    )
    result = _HANDLERS[route.intent](turn)
    return dataclasses.replace(
        result,
        metrics={
            **result.metrics,
            "intent": route.intent.value,
            "router_method": route.method,
            "router_ms": round(route.latency_ms, 3),
        },
    )


# -- without an agent ----------------------------------------------------------------------------


def _confirm(turn: Turn) -> RunResult:
    if turn.proposal is not None and not turn.pending:
        return _answer_proposal(turn, remember=True)
    done: list[str] = []
    failed: list[str] = []
    for suggestion in turn.pending:
        try:
            outcome = suggestion_respond(suggestion_id=suggestion.pk, owner_id=turn.run.owner_id, action="accept")
        except ApplicationError as exc:
            failed.append(f"I could not move {suggestion.source_path}: {exc.message}")
            continue
        if outcome.move is not None:
            done.append(f"{outcome.move.from_path} → {outcome.move.to_path}")
        if outcome.message is not None:
            turn.events.emit("message", message_payload(outcome.message))
    lines = [f"Done: moved {done[0]}." if len(done) == 1 else f"Done: moved {len(done)} files."] if done else []
    if len(done) > 1:
        lines += [f"- {item}" for item in done]
    return _reply("\n".join(lines + failed))


def _reject(turn: Turn) -> RunResult:
    if turn.proposal is not None and not turn.pending:
        return _answer_proposal(turn, remember=False)
    kept: list[str] = []
    for suggestion in turn.pending:
        try:
            suggestion_respond(suggestion_id=suggestion.pk, owner_id=turn.run.owner_id, action="reject")
        except ApplicationError as exc:
            logger.info("reject of suggestion %s: %s", suggestion.pk, exc.message)
            continue
        kept.append(suggestion.source_path)
    if not kept:
        return _reply("Those suggestions were already answered.")
    names = ", ".join(kept)
    return _reply(
        f"OK, I'll leave {names} where {'it is' if len(kept) == 1 else 'they are'} and won't suggest that again."
    )


def _answer_proposal(turn: Turn, *, remember: bool) -> RunResult:
    assert turn.proposal is not None
    try:
        _, result = guideline_proposal_respond(message_id=turn.proposal.pk, remember=remember)
    except ApplicationError as exc:
        return _reply(exc.message)
    turn.events.emit("message", message_payload(result))
    return _reply(str(result.content["details"]))


def _save(turn: Turn) -> RunResult:
    folder = Folder.objects.get(pk=turn.conversation.live_folder_id)
    try:
        path = inbox_note_save(folder=folder, text=turn.text, url=turn.route.params.get("url"))
    except ApplicationError as exc:
        return _reply(exc.message)
    turn.post(type=MessageType.FILE, content={"path": path}, agent="save")
    return _reply(f"Saved to {path}. Once it is indexed I'll suggest where it belongs.")


def _chat(turn: Turn) -> RunResult:
    route = turn.route
    unsure = route.params.get("fallback") == "true"
    # A yes or no with nothing pending, whether the model or the offline rules noticed it.
    unanswerable = route.classified_as in (Intent.CONFIRM.value, Intent.REJECT.value) or classify_intent(
        turn.text, has_pending_suggestion=True
    ).intent in (Intent.CONFIRM, Intent.REJECT)
    if unsure or unanswerable:
        # The answer itself is the clarification: one message, its options offered as buttons.
        return dataclasses.replace(_reply(NOTHING_PENDING if unanswerable else UNSURE), options=OPTIONS)
    return _reply("You're welcome!" if _THANKS.search(turn.text) else GREETING)


# -- agents --------------------------------------------------------------------------------------


def _query(turn: Turn) -> RunResult:
    state = turn.state()
    llm = get_model("agent") or OfflineQueryPlanner(search_query=turn.route.params.get("search_query") or turn.text)
    try:
        outcome = agent_loop_run(
            question=turn.text,
            history=turn.history(),
            tools=query_tools(state),
            tool_context=ToolContext(
                folder_id=turn.conversation.live_folder_id,
                user_id=turn.run.owner_id,
                question=turn.text,
                run_id=turn.run_id,
            ),
            events=turn.events,
            system_prompt=QUERY_SYSTEM_PROMPT,
            llm=llm,
        )
    except AgentFallbackError as exc:
        return standard_fallback(run=turn.run, events=turn.events, error=exc, metrics={"agent": "query"})
    if state.handoff is not None:
        turn.events.status("handoff", to="organize", files=len(state.handoff.file_ids), reason=state.handoff.reason)
        handed = _organize(turn, file_ids=list(state.handoff.file_ids), target=state.handoff.target)
        return _combined(handed, outcome, handoff={"from": "query", "to": "organize"})
    summary = state.summary_content()
    if summary is not None:
        turn.post(type=MessageType.SUMMARY, content=summary, agent="query")
    chosen = state.reply is not None and bool(state.reply.cards)
    cards = list(state.reply.cards) if state.reply is not None and chosen else list(state.found.values())
    if cards:
        folder = turn.conversation.live_folder
        turn.post(
            type=MessageType.SEARCH_RESULT,
            content={
                "query": state.search_query or turn.text,
                "results": [
                    card.as_result(folder=folder) for card in cards[: MAX_CHOSEN_CARDS if chosen else MAX_CARDS]
                ],
                "totalFound": max(len(state.found), len(cards)),
            },
            agent="query",
        )
    return outcome_result(outcome, metrics={"agent": "query"})


def _organize(turn: Turn, *, file_ids: Sequence[int] | None = None, target: str | None = None) -> RunResult:
    folder_id = turn.conversation.live_folder_id
    target = target or target_of(turn.route, folder_id=folder_id)
    paths, named = paths_meant(
        conversation=turn.conversation,
        before_message_id=turn.question.pk,
        text=turn.text,
        route=turn.route,
        file_ids=file_ids,
        target=target,
    )
    if not paths:
        if inbox_files(folder_id=folder_id, limit=1):
            return _reply(
                "Every file in inbox/ already has a suggestion waiting for your answer. "
                "Which file do you mean? Name it, like “move budget.md to finance/”."
            )
        return _reply("There's nothing in inbox/ waiting to be organized. Which file do you mean?")
    if target and named:
        # "Move X to Y": the user's word, carried out; no agent second-guesses it.
        conversation = turn.conversation
        told = moves_as_told(
            folder=conversation.live_folder, paths=paths, target=target, conversation=conversation, run_id=turn.run_id
        )
        for message in told.messages:
            turn.events.emit("message", message_payload(message))
        return dataclasses.replace(_reply(told_text(told)), metrics={"agent": "told", "moved": told.moved})
    batches = [paths[start : start + BATCH_SIZE] for start in range(0, len(paths), BATCH_SIZE)]
    results = [_organize_batch(turn, paths=batch, target=target) for batch in batches]
    if len(results) == 1:
        return results[0]
    first = results[0]
    return dataclasses.replace(
        first,
        text="\n\n".join(result.text for result in results if result.text),
        usage=sum((result.usage for result in results[1:]), first.usage),
        metrics={**first.metrics, "batches": len(results), "files": len(paths)},
        iterations=sum(result.iterations for result in results),
        tool_calls=tuple(call for result in results for call in result.tool_calls),
        fallback_reason=next((result.fallback_reason for result in results if result.fallback_reason), ""),
    )


def _organize_batch(turn: Turn, *, paths: Sequence[str], target: str | None) -> RunResult:
    """One organize turn over at most BATCH_SIZE files."""
    folder_id = turn.conversation.live_folder_id
    state = dataclasses.replace(turn.state(), told_target=target)
    # The offline planner is told the files to organize; only a model gets the rest of the inbox.
    waiting = [file.path for file in inbox_files(folder_id=folder_id)] if organize_agent_available() else []
    task = organize_task(message=turn.text, paths=paths, target=target, inbox=waiting)
    try:
        outcome = organize_agent_run(
            state=state, task=task, history=turn.history(), paths=paths, target=target, events=turn.events
        )
    except AgentFallbackError as exc:
        logger.warning("run %s: organize agent fell back to the policy: %s", turn.run.pk, exc.reason)
        turn.events.status("fallback", reason=exc.reason)
        outcomes = _policy_suggestions(turn, paths=paths)
        result = _reply(_outcomes_text(outcomes))
        return dataclasses.replace(
            result,
            metrics={"agent": "organize", "fallback_used": True},
            iterations=exc.progress.iterations,
            tool_calls=exc.progress.tool_calls,
            fallback_reason=exc.reason,
        )
    _announce_suggestions(turn, suggestion_ids=state.suggestion_ids)
    for message in Message.objects.filter(pk__in=state.action_message_ids).order_by("id"):
        turn.events.emit("message", message_payload(message))
    return outcome_result(outcome, metrics={"agent": "organize"})


_HANDLERS: dict[Intent, Callable[[Turn], RunResult]] = {
    Intent.CONFIRM: _confirm,
    Intent.REJECT: _reject,
    Intent.SAVE: _save,
    Intent.CHAT: _chat,
    Intent.QUERY: _query,
    Intent.ORGANIZE: _organize,
}


# -- helpers -------------------------------------------------------------------------------------


def _policy_suggestions(turn: Turn, *, paths: Sequence[str]) -> list[SuggestOutcome]:
    files = folder_files_get_by_path(folder_id=turn.conversation.live_folder_id, paths=paths)
    outcomes = [
        file_suggest(file_id=files[path].pk, on_demand=True, conversation=turn.conversation, run_id=turn.run_id)
        for path in paths
        if path in files
    ]
    _announce_suggestions(turn, suggestion_ids=[outcome.suggestion.pk for outcome in outcomes if outcome.suggestion])
    return outcomes


def _announce_suggestions(turn: Turn, *, suggestion_ids: Sequence[int]) -> None:
    """`suggestion` and `message` events for the suggestions this run wrote (not older ones reused)."""
    suggestions = OrganizationSuggestion.objects.filter(pk__in=suggestion_ids).select_related("message")
    for suggestion in suggestions.order_by("id"):
        message = suggestion.message
        if message is None or message.metadata.get("run_id") != turn.run_id:
            continue
        turn.events.emit("suggestion", {"suggestion_id": suggestion.pk, **message.content})
        turn.events.emit("message", message_payload(message))


def _outcomes_text(outcomes: Sequence[SuggestOutcome]) -> str:
    lines = []
    for outcome in outcomes:
        suggestion = outcome.suggestion
        if suggestion is not None and not outcome.skipped:
            lines.append(f"- {outcome.path} → {suggestion.target_folder} ({round(suggestion.confidence * 100)}% sure)")
        else:
            lines.append(f"- {outcome.path}: {outcome.skipped}")
    return "\n".join(lines) or "I found nothing to suggest."


def _describe(pending: Sequence[OrganizationSuggestion]) -> str:
    first = pending[0]
    more = f" and {len(pending) - 1} more" if len(pending) > 1 else ""
    return f"move {first.source_path} to {first.target_folder} ({round(first.confidence * 100)}% sure){more}"


def _describe_proposal(proposal: Message | None) -> str | None:
    if proposal is None:
        return None
    return f"remember this line in guideline.md: {proposal.metadata[PROPOSAL_KEY]['line']}"


def _reply(text: str) -> RunResult:
    return RunResult(text=text, citations=(), model=NO_MODEL)


def _combined(handed: RunResult, first: AgentOutcome, *, handoff: dict[str, str]) -> RunResult:
    """The organize agent's answer, with the query agent's work counted in."""
    progress = first.progress
    return dataclasses.replace(
        handed,
        usage=handed.usage + progress.usage,
        metrics={**handed.metrics, "handoff": handoff, "query_agent": progress.metrics},
        iterations=handed.iterations + progress.iterations,
        tool_calls=progress.tool_calls + handed.tool_calls,
    )

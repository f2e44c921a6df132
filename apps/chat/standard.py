"""Standard mode: one hybrid search, one streamed answer citing numbered sources."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from apps.chat.answering import answer_from_sources
from apps.chat.cancel import RunCancelled
from apps.chat.events import RunEvents
from apps.chat.history import conversation_history_for_prompt
from apps.chat.image_reading import question_images_read
from apps.chat.models import AgentRun, Conversation
from apps.chat.offline import unfound_terms
from apps.chat.prompts import (
    STANDARD_SYSTEM_PROMPT,
    HistoryTurn,
    NumberedSource,
    answer_citations,
    merged_sources,
    standard_messages,
)
from apps.chat.types import RunResult
from apps.llm.factory import get_llm
from apps.llm.failures import FailureKind
from apps.llm.types import Message
from apps.search.selectors import chunk_search


@dataclass(frozen=True)
class StandardPrompt:
    sources: list[NumberedSource]
    history: list[HistoryTurn]
    messages: list[Message]


def standard_prompt(
    *, conversation: Conversation, question: str, before_message_id: int, gathered: Sequence[NumberedSource] = ()
) -> StandardPrompt:
    """One search for `question` in the conversation's folder (after what an agent `gathered`), the
    turns before `before_message_id`, and the model's messages built from both."""
    hits = chunk_search(
        folder_id=conversation.live_folder_id,
        query=question[: settings.SEARCH_MAX_QUERY_CHARS],
        k=settings.CHAT_SEARCH_K,
    )
    sources = merged_sources(gathered=gathered, hits=hits)
    history = conversation_history_for_prompt(conversation=conversation, before_message_id=before_message_id)
    messages = standard_messages(history=history, question=question, sources=sources)
    return StandardPrompt(sources=sources, history=history, messages=messages)


def chat_run_standard(
    *,
    run: AgentRun,
    events: RunEvents,
    gathered: Sequence[NumberedSource] = (),
    searched: Sequence[str] = (),
    model_failure: FailureKind | None = None,
) -> RunResult:
    """`gathered`: passages an agent found before it fell back; they lead, the search adds to them.
    `searched`: the agent's queries, told with the question when nothing is found. `model_failure`:
    the agent's model failed, so the answer comes offline without asking a model again."""
    if run.question is None:
        raise ValueError(f"run {run.pk} has no question")
    question = str(run.question.content.get("text", ""))
    images_started = time.perf_counter()
    images = question_images_read(question=run.question, events=events)  # they lead the sources

    events.status("searching")
    started = time.perf_counter()
    prompt = standard_prompt(
        conversation=run.conversation,
        question=question,
        before_message_id=run.question.pk,
        gathered=[*images.sources, *gathered],
    )
    sources, history, messages = prompt.sources, prompt.history, prompt.messages
    unfound = functools.partial(
        unfound_terms, folder_id=run.conversation.live_folder_id, question=question, sources=sources
    )
    searched_at = time.perf_counter()

    events.status("generating", sources=len(sources))
    try:
        answer = answer_from_sources(
            llm=get_llm("answer"),
            messages=messages,
            system=STANDARD_SYSTEM_PROMPT,
            sources=sources,
            searched=[*searched, question],
            events=events,
            run_id=run.pk,
            failure=model_failure,
            unfound=unfound,
        )
    except RunCancelled as exc:  # the stopped answer's [n] still point at their sources
        # An offline answer, renumbered, has already set them.
        exc.citations = exc.citations or answer_citations(answer=events.text_so_far(), sources=sources)
        raise
    generated = time.perf_counter()
    return RunResult(
        text=images.with_note(text=answer.text, events=events),
        citations=answer.citations,
        model=answer.model,
        usage=answer.usage + images.usage,
        metrics={
            "searches": 1,
            "llm_calls": answer.llm_calls,
            "sources": len(sources),
            "gathered_sources": len(gathered),
            "history_turns": len(history),
            **({"images": len(images.readings), "images_ms": _ms(started - images_started)} if images.readings else {}),
            "search_ms": _ms(searched_at - started),
            "first_token_ms": _ms(answer.first_text_at - searched_at) if answer.first_text_at else None,
            "generation_ms": _ms(generated - searched_at),
            **({"model_failure": answer.failure.value} if answer.failure else {}),
        },
        fallback_reason=answer.fallback_reason,
        notice=answer.notice,
        truncated=answer.truncated,
        sources_consulted=answer.sources_consulted,
    )


def _ms(seconds: float) -> int:
    return round(seconds * 1000)

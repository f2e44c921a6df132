"""Standard mode: one hybrid search, one streamed answer citing numbered sources."""

from __future__ import annotations

import time
from collections.abc import Sequence

from django.conf import settings

from apps.chat.cancel import RunCancelled
from apps.chat.events import RunEvents
from apps.chat.models import AgentRun
from apps.chat.prompts import (
    STANDARD_SYSTEM_PROMPT,
    NumberedSource,
    answer_citations,
    merged_sources,
    standard_messages,
)
from apps.chat.selectors import conversation_history
from apps.chat.types import RunResult
from apps.llm.factory import get_llm
from apps.llm.types import TextDelta
from apps.search.selectors import chunk_search


def chat_run_standard(*, run: AgentRun, events: RunEvents, gathered: Sequence[NumberedSource] = ()) -> RunResult:
    """`gathered`: passages an agent found before it fell back; they lead, the search adds to them."""
    if run.question is None:
        raise ValueError(f"run {run.pk} has no question")
    question = str(run.question.content.get("text", ""))
    conversation = run.conversation

    events.status("searching")
    started = time.perf_counter()
    hits = chunk_search(
        folder_id=conversation.folder_id,
        query=question[: settings.SEARCH_MAX_QUERY_CHARS],
        k=settings.CHAT_SEARCH_K,
    )
    sources = merged_sources(gathered=gathered, hits=hits)
    history = conversation_history(
        conversation_id=conversation.pk,
        before_message_id=run.question.pk,
        max_tokens=settings.CHAT_HISTORY_MAX_TOKENS,
        max_messages=settings.CHAT_HISTORY_MAX_MESSAGES,
    )
    messages = standard_messages(history=history, question=question, sources=sources)
    searched = time.perf_counter()

    events.status("generating", sources=len(sources))
    llm = get_llm("answer")
    first_text_at: list[float] = []

    def on_text(delta: TextDelta) -> None:
        if not first_text_at:
            first_text_at.append(time.perf_counter())
        events.text(delta)

    try:
        response = llm.complete(messages=messages, system=STANDARD_SYSTEM_PROMPT, on_text=on_text)
    except RunCancelled as exc:  # the stopped answer's [n] still point at their sources
        exc.citations = answer_citations(answer=events.text_so_far(), sources=sources)
        raise
    events.flush_text()
    generated = time.perf_counter()
    return RunResult(
        text=response.text,
        citations=answer_citations(answer=response.text, sources=sources),
        model=response.model or llm.model,
        usage=response.usage,
        metrics={
            "searches": 1,
            "llm_calls": 1,
            "sources": len(sources),
            "gathered_sources": len(gathered),
            "history_turns": len(history),
            "search_ms": _ms(searched - started),
            "first_token_ms": _ms(first_text_at[0] - searched) if first_text_at else None,
            "generation_ms": _ms(generated - searched),
        },
    )


def _ms(seconds: float) -> int:
    return round(seconds * 1000)

"""Answers that hold up: a model's answer from numbered passages, or the offline answerer's.

`answer_from_sources` asks the model; when it fails after its retries (or its circuit breaker is
open) the offline extractive answerer answers over the same passages, after a `notice` event, so
the question is still answered, and cited. A model answer that cites nothing while passages were
given is asked for once more with a citation instruction; if it still cites nothing, the passages
it was given are attached as sources consulted. An answer that found nothing says what was
searched. The provider's exception goes to the log (redacted, with the run id), never to the user.
The offline answerer's answer (the default provider's, or the fallback's) comes from `offline`:
judged against the question's terms, then renumbered by first use before it is streamed.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.chat.cancel import RunCancelled
from apps.chat.events import RunEvents
from apps.chat.offline import offline_answer
from apps.chat.prompts import NumberedSource, answer_citations
from apps.chat.types import Citation
from apps.core.logging import redact
from apps.llm.base import LLMError, LLMProvider, stream_text
from apps.llm.extractive import ExtractiveProvider
from apps.llm.failures import REASONS, FailureKind, error_notice, failure_kind, failure_notice
from apps.llm.types import Message, StopReason, TextCallback, TextDelta, Usage

logger = logging.getLogger(__name__)

CITE_AGAIN_PROMPT = (
    "Your answer cites none of the numbered sources. Answer again, citing each statement with the number "
    "of the source it comes from in square brackets, like [1] or [2, 3]. If the sources do not contain the "
    "answer, say so plainly."
)
# How an answer says it found nothing: the offline answerer's sentence, and how models put it, in
# English and in the interface's other languages (the answerer's own sentence is in the asker's).
_NOT_FOUND = re.compile(
    r"\b(found nothing|(could ?n[o']t|can ?n[o']t|did ?n[o']t|unable to) (find|locate)|no (relevant )?information"
    r"|(do|does) not (contain|mention|say)|not (mentioned|found) in"
    r"|nichts(\s\S+){0,6}\sgefunden|keine (relevanten )?informationen"
    r"|rien trouvé|aucune information"
    r"|no (he )?encontr(é|ado) nada|no hay información)\b",
    re.IGNORECASE,
)
SEARCHED_FILES_SHOWN = 5
SEARCHED_QUERY_CHARS = 120


def says_found_nothing(text: str) -> bool:
    """Whether an answer says it found nothing (the offline answerer's sentence or a model's words)."""
    return bool(_NOT_FOUND.search(text))


# The question's words the sources lack (`offline.unfound_terms`), looked up when first needed.
UnfoundTerms = Callable[[], Sequence[str]]


@dataclass(frozen=True)
class Answer:
    text: str
    citations: tuple[Citation, ...]
    model: str
    usage: Usage = field(default_factory=Usage)
    llm_calls: int = 0
    truncated: bool = False
    # Given passages an uncited answer was written from (it cites none of them).
    sources_consulted: tuple[Citation, ...] = ()
    failure: FailureKind | None = None  # set when the offline answerer answered instead of the model
    notice: str = ""  # the line shown above an offline answer (`failure`'s)
    first_text_at: float | None = None

    @property
    def fallback_reason(self) -> str:
        return str(REASONS[self.failure]) if self.failure else ""


def answer_from_sources(
    *,
    llm: LLMProvider,
    messages: Sequence[Message],
    system: str,
    sources: Sequence[NumberedSource],
    searched: Sequence[str],
    events: RunEvents,
    run_id: object,
    failure: FailureKind | None = None,
    unfound: UnfoundTerms = lambda: (),
) -> Answer:
    """Stream the answer to `messages` (whose last turn holds `sources`, numbered) to `events`.

    `failure`: the model already failed in this run (an agent's), so the answer comes offline at
    once, without calling it again. `searched`: the queries run, for an answer that found nothing.
    `unfound`: the question's words the sources lack when they hold too little of it
    (`offline.unfound_terms`): the offline answerer then says it found nothing about them. Asked
    only when the answer comes offline: a model needs no look-up.
    """
    first_text_at: list[float] = []

    def on_text(delta: TextDelta) -> None:
        if not first_text_at:
            first_text_at.append(time.perf_counter())
        events.text(delta)

    if failure is not None:
        answer = _offline(
            messages=messages,
            sources=sources,
            events=events,
            failure=failure,
            notice=failure_notice(failure),
            on_text=on_text,
            unfound=unfound,
        )
    elif isinstance(llm, ExtractiveProvider):
        answer = _offline(messages=messages, sources=sources, events=events, on_text=on_text, unfound=unfound, llm=llm)
    else:
        answer = _from_model(
            llm=llm,
            messages=messages,
            system=system,
            sources=sources,
            events=events,
            run_id=run_id,
            on_text=on_text,
            unfound=unfound,
        )
    text, consulted = answer_supplement(
        text=answer.text, citations=answer.citations, sources=sources, searched=searched, on_text=on_text
    )
    events.flush_text()
    return replace(
        answer, text=text, sources_consulted=consulted, first_text_at=first_text_at[0] if first_text_at else None
    )


def answer_supplement(
    *,
    text: str,
    citations: Sequence[Citation],
    sources: Sequence[NumberedSource],
    searched: Sequence[str],
    on_text: TextCallback,
) -> tuple[str, tuple[Citation, ...]]:
    """An uncited answer's text and sources consulted: one that found nothing says (and streams)
    what was searched; any other gets the passages it was given."""
    if citations:
        return text, ()
    if _NOT_FOUND.search(text) or not sources:
        note = searched_note(queries=searched, sources=sources)
        on_text(TextDelta(text=f"\n\n{note}"))
        return f"{text}\n\n{note}", ()
    return text, tuple(source.citation() for source in sources)


def _from_model(
    *,
    llm: LLMProvider,
    messages: Sequence[Message],
    system: str,
    sources: Sequence[NumberedSource],
    events: RunEvents,
    run_id: object,
    on_text: TextCallback,
    unfound: UnfoundTerms,
) -> Answer:
    streamed: list[str] = []

    def track(delta: TextDelta) -> None:
        streamed.append(delta.text)
        on_text(delta)

    try:
        response = llm.complete(messages=messages, system=system, on_text=track)
    except LLMError as exc:
        kind = failure_kind(exc)
        logger.warning("run %s: answer model failed (%s), answering offline: %s", run_id, kind, redact(repr(exc)))
        if streamed:  # a stream that broke midway: what it showed is not the answer
            events.flush_text()
            events.emit("text_reset", {"reason": "model_unavailable"})
        return _offline(
            messages=messages,
            sources=sources,
            events=events,
            failure=kind,
            notice=error_notice(exc),
            on_text=on_text,
            unfound=unfound,
        )
    model, usage, calls = response.model or llm.model, response.usage, 1
    text, truncated = response.text, response.stop_reason is StopReason.MAX_TOKENS
    citations = answer_citations(answer=text, sources=sources)
    answer = Answer(text=text, citations=citations, model=model, usage=usage, llm_calls=calls, truncated=truncated)
    if not needs_citations(llm=llm, answer=answer, sources=sources):
        return answer
    return cite_again(
        llm=llm, messages=messages, system=system, answer=answer, sources=sources, events=events, run_id=run_id
    )


def needs_citations(*, llm: LLMProvider, answer: Answer, sources: Sequence[NumberedSource]) -> bool:
    """Whether to ask once more: passages were given, the whole answer cites none, and it found
    something. The offline answerer cites whatever it picks: asking it again could add nothing."""
    if isinstance(llm, ExtractiveProvider) or not sources or answer.citations or answer.truncated:
        return False
    return not _NOT_FOUND.search(answer.text)


def cite_again(
    *,
    llm: LLMProvider,
    messages: Sequence[Message],
    system: str,
    answer: Answer,
    sources: Sequence[NumberedSource],
    events: RunEvents,
    run_id: object,
) -> Answer:
    """The one retry of an uncited answer to `messages`, not streamed: it replaces the answer shown
    (`text_reset`, then its text) only when it cites; otherwise the first answer stands."""
    asked = [*messages, Message.assistant(answer.text), Message.user(CITE_AGAIN_PROMPT)]
    try:
        again = llm.complete(messages=asked, system=system)
    except LLMError as exc:
        logger.warning("run %s: citation retry failed (%s): %s", run_id, failure_kind(exc), redact(repr(exc)))
        return replace(answer, llm_calls=answer.llm_calls + 1)
    counted = replace(answer, usage=answer.usage + again.usage, llm_calls=answer.llm_calls + 1)
    citations = answer_citations(answer=again.text, sources=sources)
    if not citations:
        return counted
    events.flush_text()
    events.emit("text_reset", {"reason": "citations"})
    events.text(TextDelta(text=again.text))
    events.flush_text()
    truncated = again.stop_reason is StopReason.MAX_TOKENS
    return replace(counted, text=again.text, citations=citations, truncated=truncated)


def _offline(
    *,
    messages: Sequence[Message],
    sources: Sequence[NumberedSource],
    events: RunEvents,
    on_text: TextCallback,
    unfound: UnfoundTerms,
    failure: FailureKind | None = None,
    notice: str = "",
    llm: ExtractiveProvider | None = None,
) -> Answer:
    """The offline answerer's answer: the configured provider's (`llm`), or, after the model's
    `failure`, the fallback's, announced by its `notice`."""
    if failure is not None:
        # A used-up budget takes this path too: no call was made, and its notice says when it resets.
        events.emit("notice", {"kind": "model_unavailable", "failure": failure.value, "message": notice})
    found = offline_answer(llm=llm or ExtractiveProvider(), messages=messages, sources=sources, unfound=unfound())
    try:
        stream_text(found.text, on_text)
    except RunCancelled as exc:  # what was shown cites the sources by their new numbers
        exc.citations = answer_citations(answer=events.text_so_far(), sources=found.sources)
        raise
    return Answer(
        text=found.text,
        citations=answer_citations(answer=found.text, sources=found.sources),
        model=found.model,
        # A fallback's usage is left out: word counts, not tokens any model was paid for.
        usage=found.usage if failure is None else Usage(),
        llm_calls=found.llm_calls if failure is None else 0,
        failure=failure,
        notice=notice,
    )


def searched_note(*, queries: Sequence[str], sources: Sequence[NumberedSource]) -> str:
    """What was searched, for an answer that found nothing: the queries, and the files read."""
    queried = dict.fromkeys(q for q in queries if q.strip())
    shown = ", ".join(_("“%(query)s”") % {"query": query[:SEARCHED_QUERY_CHARS]} for query in queried)
    if not sources:
        if shown:
            return _("Searched this folder for %(queries)s: nothing matched.") % {"queries": shown}
        return _("Searched this folder: nothing matched.")
    files = list(dict.fromkeys(source.path or source.file_name for source in sources))
    listed = ", ".join(files[:SEARCHED_FILES_SHOWN])
    if len(files) > SEARCHED_FILES_SHOWN:
        listed = _("%(files)s and %(count)s more") % {"files": listed, "count": len(files) - SEARCHED_FILES_SHOWN}
    values = {"queries": shown, "count": len(sources), "files": listed}
    if shown:
        read = ngettext(
            "Searched this folder for %(queries)s and read %(count)s passage from %(files)s.",
            "Searched this folder for %(queries)s and read %(count)s passages from %(files)s.",
            len(sources),
        )
    else:
        read = ngettext(
            "Searched this folder and read %(count)s passage from %(files)s.",
            "Searched this folder and read %(count)s passages from %(files)s.",
            len(sources),
        )
    return read % values

"""The offline answerer's answer as standard mode gives it: judged, renumbered, then streamed.

Before answering, the question's lexemes (the keyword search's, under the folder's language) are
looked up in the passages found: when the passages hold fewer than two of them (all of a shorter
question's), or too little of their weight, the passages are about something else ("the name of my
dentist" meets a contacts list that names no dentist), and the answer says what it found nothing
about instead of quoting them. Otherwise the extractive answerer answers, and since it knows its
whole answer before any of it is shown, its citations are numbered 1, 2, … in order of first use
before it is streamed: the text shown, the text kept and the sources agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from apps.chat.prompts import NumberedSource, renumbered
from apps.llm.base import LLMProvider
from apps.llm.extractive_parts import looked_up
from apps.llm.types import Message, Usage
from apps.search.selectors import question_terms

# What the passages must hold of the question: this many of its lexemes (all of them when it has
# fewer), and this share of their weight (IDF in the folder, where a word the folder never holds
# weighs the most). Counting, not weight, is what decides most: words a question asks with
# ("recently", "join", "wrong") are seldom in the folder, and weigh the most too. At a share of
# 0.5 alone, 7 of the 79 facts of bench/offline_answers.py were lost; at 0.25 with two lexemes, none.
MIN_HELD_TERMS = 2
MIN_HELD_SHARE = 0.25


@dataclass(frozen=True)
class OfflineAnswer:
    text: str
    sources: list[NumberedSource]  # numbered as the text cites them
    model: str
    usage: Usage = field(default_factory=Usage)
    llm_calls: int = 0


def unfound_terms(*, folder_id: int, question: str, sources: Sequence[NumberedSource]) -> tuple[str, ...]:
    """The question's words the passages do not hold, when they hold too little of it to answer
    from; () when they hold enough (or the question has no words the search would look up). The
    way a question is put ("how much", "larger") is no part of what it asks about: the answerer
    reads it as the kind of figure wanted, and the folder seldom holds those words."""
    passages = [_searchable(source) for source in sources]
    terms = question_terms(folder_id=folder_id, question=looked_up(question), passages=passages)
    held = [term for term in terms if term.held]
    if len(held) == len(terms):
        return ()
    share = sum(term.idf for term in held) / (sum(term.idf for term in terms) or 1.0)
    if len(held) >= min(MIN_HELD_TERMS, len(terms)) and share >= MIN_HELD_SHARE:
        return ()
    return tuple(dict.fromkeys(term.word for term in terms if not term.held))


def nothing_about(words: Sequence[str]) -> str:
    quoted = [f'"{word}"' for word in words]
    listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return f"I found nothing in this folder about {listed}."


def offline_answer(
    *, llm: LLMProvider, messages: Sequence[Message], sources: Sequence[NumberedSource], unfound: Sequence[str]
) -> OfflineAnswer:
    """The offline answer to `messages` (whose last turn holds `sources`), not streamed yet."""
    if unfound:
        return OfflineAnswer(text=nothing_about(unfound), sources=list(sources), model=llm.model)
    response = llm.complete(messages=messages)
    text, numbered = renumbered(answer=response.text, sources=sources)
    return OfflineAnswer(
        text=text, sources=numbered, model=response.model or llm.model, usage=response.usage, llm_calls=1
    )


def _searchable(source: NumberedSource) -> str:
    # The answerer reads a passage with its file's name, folders and heading: so does this test.
    where = f"{source.path or source.file_name} {source.location}".replace("/", " ").replace("_", " ")
    return f"{where}\n{source.text}"

"""The offline answerer's answer as standard mode gives it: judged, renumbered, then streamed.

Before answering, the question's lexemes (the keyword search's, under the folder's language) are
looked up in the passages found: when the passages hold fewer than two of them (all of a shorter
question's), or too little of their weight, the passages are about something else ("the name of my
dentist" meets a contacts list that names no dentist), and the answer says what it found nothing
about instead of quoting them. So it does when every part of the question has a word the passages
hold only apart from the part's other words ("the gas bill" meets an electricity bill and a
contract saying there is no gas connection): the thing asked about is not there, though its words
are. Otherwise the extractive answerer answers, and since it knows its
whole answer before any of it is shown, its citations are numbered 1, 2, … in order of first use
before it is streamed: the text shown, the text kept and the sources agree.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from apps.chat.prompts import NumberedSource, renumbered
from apps.llm.base import LLMProvider
from apps.llm.extractive_parts import looked_up, question_parts
from apps.llm.extractive_text import terms as answer_terms
from apps.llm.types import Message, Usage
from apps.search.selectors import question_terms

# What the passages must hold of the question: this many of its lexemes (all of them when it has
# fewer), and this share of their weight (IDF in the folder, where a word the folder never holds
# weighs the most). Counting, not weight, is what decides most: words a question asks with
# ("recently", "join", "wrong") are seldom in the folder, and weigh the most too. At a share of
# 0.5 alone, 7 of the 79 facts of bench/chat/offline_answers.py were lost; at 0.25 with two lexemes, none.
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
    from, or those they hold only apart from the rest of it (`_stranded`); () when they hold enough
    (or the question has no words the search would look up). The
    way a question is put ("how much", "larger") is no part of what it asks about: the answerer
    reads it as the kind of figure wanted, and the folder seldom holds those words."""
    passages = [_searchable(source) for source in sources]
    terms = question_terms(folder_id=folder_id, question=looked_up(question), passages=passages)
    held = [term for term in terms if term.held]
    if len(held) == len(terms):
        return _stranded(question=question, sources=sources)
    share = sum(term.idf for term in held) / (sum(term.idf for term in terms) or 1.0)
    if len(held) >= min(MIN_HELD_TERMS, len(terms)) and share >= MIN_HELD_SHARE:
        return _stranded(question=question, sources=sources)
    return tuple(dict.fromkeys(term.word for term in terms if not term.held))


def _stranded(*, question: str, sources: Sequence[NumberedSource]) -> tuple[str, ...]:
    """The question's words (as typed) naming what kind of thing it asks about ("gas" of "the gas
    bill": a word just before another of its part's words) that the passages' files hold only apart
    from the rest of their part, when every part has one; () when some part's words meet in a file.
    Only such a modifier counts: a verb the files word otherwise ("leads" for "led by") does not."""
    files: dict[str, set[str]] = {}
    for source in sources:
        files.setdefault(source.path or source.file_name, set()).update(answer_terms(_searchable(source)))
    stranded: list[str] = []
    for part in question_parts(question):
        held = {term for term in part.terms if any(term in words for words in files.values())}
        alone = {
            term for term in held if not any(term in words and words & (held - {term}) for words in files.values())
        }
        tokens = _TOKEN.findall(part.text)
        modifiers = [
            word
            for word, following in itertools.pairwise(tokens)
            if set(answer_terms(word)) & alone and set(answer_terms(following)) & held
        ]
        if len(held) < MIN_HELD_TERMS or not modifiers:
            return ()
        stranded += modifiers
    return tuple(dict.fromkeys(stranded))


# Words and the punctuation between them: "the gas bill" holds a modifier, "the gas, the bill" none.
_TOKEN = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?|[^\w\s]")


def nothing_about(words: Sequence[str]) -> str:
    """The answer when the passages hold too little of the question, in the asker's language."""
    quoted = [_('"%(word)s"') % {"word": word} for word in words]
    if len(quoted) == 1:
        listed = quoted[0]
    else:
        listed = _("%(words)s or %(last)s") % {"words": ", ".join(quoted[:-1]), "last": quoted[-1]}
    return _("I found nothing in this folder about %(words)s.") % {"words": listed}


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

"""Sentence selection for the extractive provider: which sentences of the passages answer a question.

Term overlap weighted by IDF over the passages at hand, with stopwords dropped and a light stemmer so
"boils" meets "boiling". Deterministic: ties fall back to passage order, then sentence order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

# Share of the question's terms a sentence must contain to count as relevant at all. Below it, a
# sentence that only shares a word like "report" would be passed off as an answer.
MIN_COVERAGE = 0.3
MAX_SENTENCES = 4
MIN_SENTENCES = 2
# A sentence scoring under this fraction of the best one adds noise, not support.
RELATIVE_CUTOFF = 0.5
MAX_SENTENCE_CHARS = 400

_STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me
    more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves also there's what's it's i'm let's
    please tell show find give know want need get got say said anything something thing things
    file files document documents folder folders doc docs
    """.split()
)


@dataclass(frozen=True)
class Passage:
    n: int
    text: str


@dataclass(frozen=True)
class Pick:
    n: int
    sentence: str
    score: float


def terms(text: str) -> list[str]:
    return [_stem(word) for word in re.findall(r"[^\W_]+(?:'[^\W_]+)?", text.lower()) if word not in _STOPWORDS]


def shares_terms(question: str, text: str) -> bool:
    return bool(set(terms(question)) & set(terms(text)))


def split_sentences(text: str) -> list[str]:
    sentences = []
    for paragraph in re.split(r"\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)", text):
        for raw in re.split(r"(?<=[.!?])\s+(?=[\"'“(\[]?[A-Z0-9])", paragraph):
            sentence = " ".join(raw.split())
            if len(sentence.split()) >= 2:
                sentences.append(_shorten(sentence))
    return sentences


def pick_sentences(*, question: str, passages: Sequence[Passage]) -> list[Pick]:
    """The 2-4 best sentences answering `question`, best first; empty when nothing is relevant."""
    question_terms = set(terms(question))
    if not question_terms or not passages:
        return []
    passage_terms = [set(terms(passage.text)) for passage in passages]
    idf = {term: _idf(term, passage_terms) for term in question_terms}
    candidates: list[tuple[float, int, int, Pick]] = []
    seen: set[str] = set()
    for order, passage in enumerate(passages):
        for position, sentence in enumerate(split_sentences(passage.text)):
            matched = question_terms & set(terms(sentence))
            key = sentence.lower()
            if len(matched) / len(question_terms) < MIN_COVERAGE or key in seen:
                continue
            seen.add(key)
            score = sum(idf[term] for term in matched)
            candidates.append((-score, order, position, Pick(n=passage.n, sentence=sentence, score=score)))
    ranked = [pick for *_, pick in sorted(candidates, key=lambda item: item[:3])]
    if not ranked:
        return []
    best = ranked[0].score
    strong = [pick for pick in ranked if pick.score >= RELATIVE_CUTOFF * best]
    return ranked[: min(MAX_SENTENCES, max(MIN_SENTENCES, len(strong)))]


def cite(pick: Pick) -> str:
    """The sentence with its `[n]` placed before the closing punctuation."""
    body = pick.sentence.rstrip(".!?…")
    return f"{body} [{pick.n}]{pick.sentence[len(body):] or '.'}"


def _idf(term: str, passage_terms: Sequence[set[str]]) -> float:
    # BM25's smoothed IDF: always positive, so a term every passage shares still counts a little.
    total = len(passage_terms)
    frequency = sum(term in found for found in passage_terms)
    return math.log(1 + (total - frequency + 0.5) / (frequency + 0.5))


def _stem(word: str) -> str:
    """A light suffix stripper: enough for plurals and verb forms to meet, not a linguist."""
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("ing", "ed")) and not word.endswith("eed"):
        base = word[: -3 if word.endswith("ing") else -2]
        if len(base) >= 3 and re.search("[aeiouy]", base):
            if base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # running -> runn -> run
            word = base
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]  # note, notes, noted all meet at "not"
    return word


def _shorten(sentence: str) -> str:
    if len(sentence) <= MAX_SENTENCE_CHARS:
        return sentence
    return sentence[:MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + "…"

"""The extractive provider's reading of text: terms, sentences, and which sentences are content.

Terms drop stopwords and go through a light stemmer so "boils" meets "boiling". Answers come from
content, never from headings: a heading (a markdown `#` line, a sheet name, or a short line with no
closing punctuation that starts a paragraph) is not a candidate, but its terms, like those of the
passage's heading path and file name, are inherited by every sentence under it. So "the Q3 report"
finds "revenue reached 4.2 million" under "# Q3 2024 Report". Table rows and field lists are told
as sentences by `extractive_rows`; `extractive_answer` chooses among the sentences.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from apps.llm.extractive_rows import blocks, has_leader, is_field_list, row_pairs

# What a passage must share with the question to count as relevant: 30% of its terms, and at least
# two once the question has three or more. Less, and a passage sharing one word like "price" with
# "the price of a cappuccino in Rome" would be passed off as an answer.
MIN_COVERAGE = 0.3
MIN_MATCHES = 2
MAX_SENTENCE_CHARS = 400

_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me
    more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves also there's what's it's i'm let's
    must shall may might
    please tell show find give know want need get got say said anything something thing things much many
    file files document documents folder folders doc docs
    still already yet ever currently actually exactly
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_ABBREVIATION_TEXT = """
    e.g. i.e. etc. vs. cf. approx. dr. mr. mrs. ms. prof. st. no. nos. fig. figs. p. pp. vol. ch. sec.
    inc. ltd. co. corp. jan. feb. mar. apr. jun. jul. aug. sep. sept. oct. nov. dec.
"""
_ABBREVIATIONS = frozenset(_ABBREVIATION_TEXT.split())

HEADING_MAX_WORDS = 12
_MARKDOWN_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
# A spreadsheet's name above its rows, as the xlsx parser writes it: context, like a heading.
_SHEET = re.compile(r"^Sheet:\s")
# A list item's marker (and a task list's box) is layout, not part of the sentence quoted.
_LIST_MARKER = re.compile(r"^(?:[-*•]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")


@dataclass(frozen=True)
class Passage:
    n: int
    text: str
    heading: str = ""  # the passage's heading path and file name: context every sentence inherits
    item: str = ""  # what the passage belongs to (a file path): comparisons answer from each


@dataclass(frozen=True)
class _Sentence:
    text: str
    inherited: frozenset[str]  # terms of the headings above it
    about: frozenset[str] = frozenset()  # terms of the form it is a field of: as good as its own


def terms(text: str) -> list[str]:
    # A possessive is its noun: "Anna's net pay" is about Anna, "the car's inspection" about the car.
    words = (word for word in re.findall(r"[^\W_]+(?:['\u2019][^\W_]+)?", text.lower()) if word not in _STOPWORDS)
    return [_stem(word) for word in (_POSSESSIVE.sub("", word) for word in words) if word not in _STOPWORDS]


_POSSESSIVE = re.compile(r"['\u2019]s$")


def is_relevant(*, question: str, text: str) -> bool:
    """Whether `text` holds enough of the question's terms to be worth answering from."""
    question_terms = set(terms(question))
    return bool(question_terms) and covers(question_terms, set(terms(text)))


def split_sentences(text: str) -> list[str]:
    sentences: list[str] = []
    for paragraph in re.split(r"\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)", text):
        pieces: list[str] = []
        # Not only before capitals: extracted text (OCR, old corpora) is often all lower case.
        for piece in re.split(r"(?<=[.!?])\s+", paragraph):
            if pieces and (_ends_with_abbreviation(pieces[-1]) or _splits_a_date(pieces[-1], piece)):
                pieces[-1] = f"{pieces[-1]} {piece}"
            else:
                pieces.append(piece)
        for piece in pieces:
            sentence = _LIST_MARKER.sub("", " ".join(piece.split()))
            if len(sentence.split()) >= 2:
                sentences.append(_shorten(sentence))
    return sentences


def content_sentences(passage: Passage) -> list[_Sentence]:
    """The passage's sentences that are content, each with the terms of the headings above it."""
    base = frozenset(terms(passage.heading))
    path: list[str] = []
    sentences: list[_Sentence] = []
    for paragraph in re.split(r"\n\s*\n", passage.text):
        lines = [line.strip() for line in paragraph.strip().splitlines() if line.strip()]
        while lines and _is_heading(lines[0], alone=len(lines) == 1):
            marker = _MARKDOWN_HEADING.match(lines[0])
            level = len(marker.group(1)) if marker else max(1, len(path))
            path = [*path[: level - 1], marker.group(2) if marker else lines[0]]
            lines = lines[1:]
        inherited = base | frozenset(terms(" ".join(path)))
        # A form's name above its fields ("Form W-2 Wage and Tax Statement 2024", then "Box 1
        # Wages: 82,150.00") is what each field is about, as much as the field's own words.
        form = len(lines) > 1 and _is_heading(lines[0], alone=True) and is_field_list(lines[1:])
        about = frozenset(terms(lines.pop(0))) if form else frozenset()
        for block in blocks(lines):
            told = [_shorten(_LIST_MARKER.sub("", block.text))] if block.told else split_sentences(block.text)
            sentences.extend(_Sentence(sentence, inherited, about) for sentence in told)
    return sentences


def _is_heading(line: str, *, alone: bool) -> bool:
    if _MARKDOWN_HEADING.match(line) or _SHEET.match(line):
        return True
    # A title line: short, not a sentence, standing alone, and not a field or row ("rating: 4").
    words = line.split()
    return (
        alone
        and not row_pairs(line)
        and not has_leader(line)
        and 0 < len(words) <= HEADING_MAX_WORDS
        and not re.search(r"[.!?:;,…]$", line)
    )


def covers(question_terms: set[str], found: set[str]) -> bool:
    needed = 1 if len(question_terms) <= 2 else max(MIN_MATCHES, math.ceil(MIN_COVERAGE * len(question_terms)))
    return len(question_terms & found) >= needed


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


# German writes a day as an ordinal ("bis zum 31. März"): its full stop does not end the sentence.
_MONTHS = frozenset(
    [
        "januar",
        "jänner",
        "februar",
        "märz",
        "april",
        "mai",
        "juni",
        "juli",
        "august",
        "september",
        "oktober",
        "november",
        "dezember",
    ]
)


def _splits_a_date(piece: str, following: str) -> bool:
    day = piece.rsplit(" ", 1)[-1]
    month = following.split(" ", 1)[0].lower().rstrip(".,")
    return bool(re.fullmatch(r"\d{1,2}\.", day)) and month in _MONTHS


def _ends_with_abbreviation(piece: str) -> bool:
    last = piece.rsplit(" ", 1)[-1].lower()
    # "e.g.", "Dr.", "p." and initials such as "J." do not end a sentence.
    return last in _ABBREVIATIONS or bool(re.fullmatch(r"[a-z]\.", last))


def _shorten(sentence: str) -> str:
    if len(sentence) <= MAX_SENTENCE_CHARS:
        return sentence
    return sentence[:MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + "…"

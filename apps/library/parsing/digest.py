"""Preview and digest of a file's text: a cheap extractive summary, no model involved."""

from __future__ import annotations

import re
from collections import Counter

PREVIEW_CHARS = 500
DIGEST_CHARS = 600
DIGEST_SENTENCES = 3
# Summaries read the start of a document; scoring a whole book would only cost time.
_SCAN_CHARS = 20_000
_SPACES = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n{2,}|\n(?=[-*#|])")
_WORD = re.compile(r"[^\W\d_]{3,}")
# Markdown list, heading and checkbox markers at the start of a sentence.
_MARKUP = re.compile(r"^(?:(?:#{1,6}|[-*+>]|\d+[.)]|\[[ xX]\])\s+)+")
_TITLE_CHARS = 100
_STOPWORD_TEXT = (
    "the and for are but not you all any can had her was one our out has him his how its may new now see "
    "two who did get let put say she too use that with have this will your from they been were said each "
    "which their there what about would these other into more some than then them when where also such "
    "only over"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def text_preview(*, text: str) -> str:
    flat = _SPACES.sub(" ", text[: PREVIEW_CHARS * 4]).strip()
    return flat if len(flat) <= PREVIEW_CHARS else flat[:PREVIEW_CHARS].rsplit(" ", 1)[0] + "…"


def text_digest(*, text: str) -> str:
    """The title, then the sentences sharing the most frequent content words, in document order."""
    parts = (_MARKUP.sub("", _SPACES.sub(" ", part).strip()) for part in _SENTENCE_END.split(text[:_SCAN_CHARS]))
    # Repeated lines (headers, footers, boilerplate) would otherwise outvote the content.
    sentences = list(dict.fromkeys(part for part in parts if part))
    if len(sentences) > DIGEST_SENTENCES:
        # A short first line is the title: the best one-line statement of what the file is.
        title = sentences[:1] if len(sentences[0]) <= _TITLE_CHARS else []
        sentences = title + _top_sentences(sentences[len(title) :], DIGEST_SENTENCES - len(title))
    digest = " ".join(sentence if sentence[-1] in ".!?:" else sentence + "." for sentence in sentences)
    return digest if len(digest) <= DIGEST_CHARS else digest[:DIGEST_CHARS].rsplit(" ", 1)[0] + "…"


def _top_sentences(sentences: list[str], count: int) -> list[str]:
    words = [[word.lower() for word in _WORD.findall(sentence)] for sentence in sentences]
    frequency = Counter(word for sentence in words for word in sentence if word not in _STOPWORDS)

    def score(index: int) -> float:
        content = [frequency[word] for word in words[index] if word in frequency]
        if not content:
            return 0.0
        # Openings usually state what a document is; long sentences should not win on length alone.
        return sum(content) / len(content) ** 0.5 * (1.5 if index < 2 else 1.0)

    best = sorted(range(len(sentences)), key=score, reverse=True)[:count]
    return [sentences[index] for index in sorted(best)]

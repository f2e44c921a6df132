"""The default offline provider: deterministic, no network, same protocol as the real ones.

Without tools it answers the last user prompt (see `sources.build_user_prompt`) part by part with
the sentences of its sources that answer each part, each cited `[n]` and quoted in citation order,
then names any part nothing answers (see `extractive_answer`); a comparison of amounts or dates, a
sum asked for, or the days between two dates is computed and said first (see `extractive_compare`,
`extractive_dates`). With tools it plays the agent: search, rewrite when the results are weak, read
the top documents, then answer from everything gathered, numbering the sources in the order
gathered and returning them in `citation_sources`. System prompt, max_tokens and temperature mean
nothing here and are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext_lazy

from apps.llm.base import stream_text
from apps.llm.extractive_agent import gathered_sources, next_calls, read_turn
from apps.llm.extractive_answer import answer, cite, not_found
from apps.llm.extractive_text import Passage, terms
from apps.llm.sources import extract_citations
from apps.llm.types import LLMResponse, Message, StopReason, TextCallback, ToolSpec, Usage

# Lazy: in the language active when the answer is made (a run's is its owner's).
NOTHING_RELEVANT = gettext_lazy("I found nothing in this folder that is relevant to your question.")


class ExtractiveProvider:
    def __init__(self, *, model: str = "extractive") -> None:
        self.model = model

    def complete(
        self,
        *,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        on_text: TextCallback | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> LLMResponse:
        turn = read_turn(messages)
        input_tokens = _approx_tokens(system or "", *(message.content for message in messages))
        calls = next_calls(turn, tools=tools or ())
        if calls:
            return LLMResponse(
                text="",
                tool_calls=tuple(calls),
                stop_reason=StopReason.TOOL_USE,
                usage=Usage(input_tokens=input_tokens),
                model=self.model,
            )
        sources = gathered_sources(turn)
        found = answer(
            question=turn.question,
            passages=[
                Passage(
                    n=source.n,
                    text=source.text,
                    heading=f"{_folders(source.path)} {_title(source.file_name)} {source.location}",
                    item=source.path or source.file_name,
                )
                for source in sources
            ],
        )
        quoted = [*found.comparisons, *(cite(pick) for pick in found.picks)]
        text = " ".join([*quoted, *(not_found(part) for part in found.missing)]) if quoted else str(NOTHING_RELEVANT)
        if on_text is not None:
            stream_text(text, on_text)
        cited = set(extract_citations(text))
        return LLMResponse(
            text=text,
            usage=Usage(input_tokens=input_tokens, output_tokens=_approx_tokens(text)),
            model=self.model,
            citation_sources=tuple(source for source in sources if source.n in cited),
        )


def rewrite_query_offline(*, original_query: str, feedback: str) -> str:
    """A rewrite for the `rewrite_query` tool when no model is configured: the query's content words.

    Keyword search ANDs terms, so dropping the question's filler ("what", "does", "the") is what
    most often turns an empty result into some. `feedback` cannot be understood offline.
    """
    words = [word.strip("?!.,;:\"'()") for word in original_query.split()]
    kept = [word for word in words if word and terms(word)]
    return " ".join(dict.fromkeys(kept)) or original_query.strip()


def _title(file_name: str) -> str:
    """A file name as words: "Q3-2024_report.md" -> "Q3 2024 report"."""
    return re.sub(r"[-_.]+", " ", file_name.rsplit(".", 1)[0])


def _folders(path: str) -> str:
    """A file's folders as words: "trips/2025/kyoto.md" -> "trips 2025", so "the trips" finds it."""
    return " ".join(path.split("/")[:-1])


def _approx_tokens(*texts: str) -> int:
    # Usage is informational for this provider; words are close enough to tokens for metrics.
    return sum(len(text.split()) for text in texts)

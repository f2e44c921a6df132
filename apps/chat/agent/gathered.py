"""An answer from what a research loop gathered, put together without a model.

When the model is too slow to write the answer before the total timeout, the offline extractive
answerer reads the same prompt the forced answer would have had (the numbered passages and the
research trace) and answers at once, so a timed-out run still answers within its limit and its
`[n]` mean what they meant during the research.
"""

from __future__ import annotations

from collections.abc import Sequence

from apps.chat.agent.prompts import final_answer_prompt
from apps.llm.extractive import ExtractiveProvider
from apps.llm.sources import SourceLike
from apps.llm.types import LLMResponse, Message, TextCallback


def gathered_answer(
    *, question: str, passages: Sequence[SourceLike], trace: str, stopped: str, on_text: TextCallback
) -> LLMResponse:
    prompt = final_answer_prompt(question=question, sources=passages, trace=trace, stopped=stopped)
    return ExtractiveProvider().complete(messages=[Message.user(prompt)], on_text=on_text)

"""What one agent run has gathered: numbered passages, each chunk once, within a token budget,
and the trace of the searches that found them.

Tools return passages unnumbered; the loop renders every tool result through `AgentContext.render`
in call order, on one thread, so numbering is deterministic however the calls were scheduled.
A passage keeps its number for the whole run: `[n]` means the same in every tool result, in the
final prompt, and for the extractive provider, which keeps numbers it is given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from apps.chat.prompts import NumberedSource
from apps.chat.types import Citation
from apps.llm.sources import describe_location, extract_citations

# The same estimate as the conversation history's: bounds the prompt alike for every provider.
CHARS_PER_TOKEN = 4
# A passage cut shorter than this says too little to be worth its number.
MIN_PASSAGE_TOKENS = 24


def estimate_tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + 1


@dataclass(frozen=True)
class Passage:
    """A citable piece of one file as a tool found it. `block` marks a block of a document read
    in full (rendered with `block_id`) rather than a search hit (`chunk_id`); both are chunk ids."""

    file_id: int
    file_name: str
    path: str
    chunk_id: int
    text: str
    location: Mapping[str, Any] = field(default_factory=dict)
    score: float | None = None
    block: bool = False
    # Listed inside its document (search_folder's groups): the document says which file it is.
    in_document: bool = False


@dataclass(frozen=True)
class NumberedPassage:
    """A passage as the model saw it (`text` may be cut to the budget); usable as a `SourceLike`."""

    n: int
    passage: Passage
    text: str

    @property
    def file_name(self) -> str:
        return self.passage.file_name

    @property
    def path(self) -> str:
        return self.passage.path

    @property
    def location(self) -> str:
        return describe_location(self.passage.location)

    def source(self) -> NumberedSource:
        """As standard mode numbers a search hit (what a fallback answers from)."""
        return NumberedSource(
            n=self.n,
            file_id=self.passage.file_id,
            chunk_id=self.passage.chunk_id,
            file_name=self.passage.file_name,
            path=self.passage.path,
            location=self.location,
            text=self.text,
        )

    def citation(self) -> Citation:
        return self.source().citation()


@dataclass(frozen=True)
class TraceEntry:
    iteration: int
    tool: str
    attempt: str  # what was tried, e.g. '"w2 wages" (hybrid)'
    hits: int
    new: int

    def line(self) -> str:
        return f"{self.tool} {self.attempt}: {self.hits} passages, {self.new} new"


@dataclass
class RenderStats:
    hits: int = 0
    new: int = 0
    seen: int = 0
    omitted: int = 0


class AgentContext:
    def __init__(self, *, max_tokens: int, attached: Sequence[NumberedSource] = ()) -> None:
        """`attached`: what the question brought (its images' text), numbered 1.. ahead of every
        passage the tools find, and counted against the budget."""
        self.max_tokens = max_tokens
        self.attached = [replace(source, n=n) for n, source in enumerate(attached, start=1)]
        self.tokens_used = sum(estimate_tokens(source.text) for source in self.attached)
        self.trace: list[TraceEntry] = []
        self._numbered: list[NumberedPassage] = []
        self._by_chunk: dict[int, NumberedPassage] = {}

    @property
    def passages(self) -> list[NumberedPassage]:
        return list(self._numbered)

    def sources(self) -> list[NumberedSource]:
        """Everything numbered so far, as the model saw it: the attached sources, then the passages."""
        return [*self.attached, *(passage.source() for passage in self._numbered)]

    def render(self, data: Any) -> tuple[Any, RenderStats]:
        """`data` with every `Passage` replaced by what the model gets: the numbered passage, a
        reference to the number it already has, or nothing once the budget is spent."""
        stats = RenderStats()

        def walk(node: Any) -> Any:
            if isinstance(node, Passage):
                return self._admit(node, stats)
            if isinstance(node, Mapping):
                return {key: walk(value) for key, value in node.items()}
            if isinstance(node, list | tuple):
                return [rendered for rendered in map(walk, node) if rendered is not None]
            return node

        return walk(data), stats

    def number_of(self, chunk_id: int) -> int | None:
        """The number the passage of this chunk was given, if it was admitted."""
        known = self._by_chunk.get(chunk_id)
        return known.n if known else None

    def record(self, entry: TraceEntry) -> None:
        self.trace.append(entry)

    def trace_text(self) -> str:
        return "\n".join(f"{index}. {entry.line()}" for index, entry in enumerate(self.trace, start=1))

    def citations(self, answer: str, *, also: Iterable[int] = ()) -> tuple[Citation, ...]:
        """The passages the answer cites, in order of first citation, then those `also` names (an
        answering call's list); numbers never given, dropped."""
        by_number = {source.n: source for source in self.sources()}
        numbers = dict.fromkeys([*extract_citations(answer), *also])
        return tuple(by_number[n].citation() for n in numbers if n in by_number)

    def _admit(self, passage: Passage, stats: RenderStats) -> dict[str, Any] | None:
        stats.hits += 1
        id_key = "block_id" if passage.block else "chunk_id"
        known = self._by_chunk.get(passage.chunk_id)
        if known is not None:
            stats.seen += 1
            # No text: the model has it under this number already, and resending it costs tokens.
            return {"n": known.n, id_key: passage.chunk_id, **_file_of(passage, keys=("file_id",)), "seen_before": True}
        remaining = self.max_tokens - self.tokens_used
        if remaining < MIN_PASSAGE_TOKENS:
            stats.omitted += 1
            return None
        text = passage.text
        truncated = estimate_tokens(text) > remaining
        if truncated:
            text = _clip(text, chars=(remaining - 1) * CHARS_PER_TOKEN)
        numbered = NumberedPassage(n=len(self.attached) + len(self._numbered) + 1, passage=passage, text=text)
        self._numbered.append(numbered)
        self._by_chunk[passage.chunk_id] = numbered
        self.tokens_used += estimate_tokens(text)
        stats.new += 1
        rendered: dict[str, Any] = {
            "n": numbered.n,
            id_key: passage.chunk_id,
            **_file_of(passage, keys=("file_id", "file_name", "path")),
            "location": numbered.location,
            "text": text,
        }
        if passage.score is not None:
            rendered["score"] = round(passage.score, 4)
        if truncated:
            rendered["truncated"] = True
        return rendered


def _file_of(passage: Passage, *, keys: tuple[str, ...]) -> dict[str, Any]:
    """Which file the passage is from, unless its enclosing document already says."""
    return {} if passage.in_document else {key: getattr(passage, key) for key in keys}


def _clip(text: str, *, chars: int) -> str:
    if len(text) <= chars:
        return text
    cut = text[: max(0, chars - 1)]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"

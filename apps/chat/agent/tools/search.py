"""Finding passages: hybrid search, query rewriting, search within a modification-date range.

`search_folder` groups its passages by document, best document first, each with its relevance
score (its best passage's: the hybrid's fused scores compare across searches), and can be kept to
a path prefix and to file types, as the search API's filters are.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any, Literal

from django.utils.translation import ngettext
from pydantic import Field, model_validator

from apps.chat.agent.context import Passage
from apps.chat.agent.prompts import REWRITE_SYSTEM_PROMPT, rewrite_prompt
from apps.chat.agent.registry import DATA_NOTICE, Tool, ToolContext, ToolInput, ToolKind, ToolOutput, pydantic_tool
from apps.chat.agent.tools.files import file_summary
from apps.library.selectors import folder_files_modified_between, folder_mime_types
from apps.llm.base import LLMError
from apps.llm.extractive import rewrite_query_offline
from apps.llm.factory import get_model
from apps.llm.types import Message
from apps.search.selectors import chunk_search
from apps.search.types import SearchFilters, SearchHit, SearchMode

QUERY_MAX_CHARS = 1000
FILE_TYPES_MAX = 10
REWRITE_MAX_TOKENS = 100


class SearchFolderInput(ToolInput):
    query: str = Field(
        min_length=1,
        max_length=QUERY_MAX_CHARS,
        description="Specific search terms: names, dates, amounts, distinctive words the answer would contain.",
    )
    k: int = Field(default=8, ge=1, le=20, description="How many passages to return.")
    mode: Literal["hybrid", "vector", "keyword"] = Field(
        default="hybrid", description="hybrid (default), vector (meaning only) or keyword (exact words only)."
    )
    path_prefix: str | None = Field(
        default=None,
        max_length=1024,
        description="Only files whose path starts with this, e.g. 'finance/2024/'.",
    )
    file_types: list[str] | None = Field(
        default=None,
        max_length=FILE_TYPES_MAX,
        description="Only files of these types: extensions ('pdf', 'csv'), MIME types or prefixes ('image/').",
    )


class RewriteQueryInput(ToolInput):
    original_query: str = Field(min_length=1, max_length=QUERY_MAX_CHARS, description="The query that searched badly.")
    feedback: str = Field(
        max_length=QUERY_MAX_CHARS,
        description="What was wrong with its results, e.g. 'got 2023 figures, need 2024'.",
    )


class SearchByDateRangeInput(ToolInput):
    start: dt.date = Field(description="First day of the range (YYYY-MM-DD, UTC), inclusive.")
    end: dt.date = Field(description="Last day of the range (YYYY-MM-DD, UTC), inclusive.")
    query: str | None = Field(
        default=None,
        max_length=QUERY_MAX_CHARS,
        description="Optional search terms; without them the files modified in the range are listed.",
    )
    limit: int = Field(default=10, ge=1, le=20, description="How many passages or files to return.")

    @model_validator(mode="after")
    def _ordered(self) -> SearchByDateRangeInput:
        if self.end < self.start:
            raise ValueError("end is before start")
        return self


def search_folder(arguments: SearchFolderInput, context: ToolContext) -> ToolOutput:
    path_prefix = (arguments.path_prefix or "").lstrip("/") or None
    kinds = [kind.strip() for kind in arguments.file_types or () if kind.strip()]
    mime_types = tuple(
        sorted({mime for kind in kinds for mime in folder_mime_types(folder_id=context.folder_id, kind=kind)})
    )
    filters = {key: value for key, value in (("path_prefix", path_prefix), ("file_types", kinds)) if value}
    trace = f'"{arguments.query}" ({arguments.mode})' + "".join(f" {key}={value}" for key, value in filters.items())
    data: dict[str, Any] = {"query": arguments.query, "mode": arguments.mode, **filters}
    if kinds and not mime_types:  # an empty filter would not filter: nothing of these types is here
        data.update(documents=[], message=f"The folder has no files of type {', '.join(kinds)}.")
        return ToolOutput(data=data, summary=_found([]), trace=trace)
    hits = chunk_search(
        folder_id=context.folder_id,
        query=arguments.query,
        k=arguments.k,
        mode=SearchMode(arguments.mode),
        filters=SearchFilters(path_prefix=path_prefix, mime_types=mime_types),
    )
    data.update(documents=documents_of(hits), notice=DATA_NOTICE)
    if not hits:
        data["message"] = "Nothing matched. Try other words, rewrite_query, another mode, or fewer filters."
    return ToolOutput(data=data, summary=_found(hits), trace=trace)


def documents_of(hits: list[SearchHit]) -> list[dict[str, Any]]:
    """The hits grouped by file, in the order of each file's best hit (hits come best first)."""
    documents: dict[int, dict[str, Any]] = {}
    for hit in hits:
        document = documents.setdefault(
            hit.file_id,
            {
                "file_id": hit.file_id,
                "file_name": hit.file_name,
                "path": hit.path,
                "score": round(hit.score, 4),
                "chunks": [],
            },
        )
        document["chunks"].append(replace(hit_passage(hit), in_document=True))
    return list(documents.values())


def rewrite_query(arguments: RewriteQueryInput, context: ToolContext) -> ToolOutput:
    """With no model configured (the extractive provider), the offline rewrite keeps the content
    words; when the model fails, the same, so a rewrite never costs the run."""
    offline = rewrite_query_offline(original_query=arguments.original_query, feedback=arguments.feedback)
    llm = get_model("router")
    if llm is None:
        return _rewritten(arguments, offline, method="offline")
    try:
        response = llm.complete(
            messages=[
                Message.user(rewrite_prompt(original_query=arguments.original_query, feedback=arguments.feedback))
            ],
            system=REWRITE_SYSTEM_PROMPT,
            max_tokens=REWRITE_MAX_TOKENS,
            temperature=0.0,
        )
    except LLMError:
        return _rewritten(arguments, offline, method="offline (model failed)")
    lines = response.text.strip().splitlines()
    query = lines[0].strip().strip("\"'`").strip()[:QUERY_MAX_CHARS] if lines else ""
    output = _rewritten(arguments, query or offline, method="model" if query else "offline (empty model answer)")
    return ToolOutput(data=output.data, summary=output.summary, trace=output.trace, usage=response.usage)


def search_by_date_range(arguments: SearchByDateRangeInput, context: ToolContext) -> ToolOutput:
    after = dt.datetime.combine(arguments.start, dt.time.min, tzinfo=dt.UTC)
    before = dt.datetime.combine(arguments.end + dt.timedelta(days=1), dt.time.min, tzinfo=dt.UTC)
    span = f"{arguments.start.isoformat()}..{arguments.end.isoformat()}"
    if not arguments.query:
        files = folder_files_modified_between(
            folder_id=context.folder_id, after=after, before=before, limit=arguments.limit
        )
        return ToolOutput(
            data={"start": arguments.start, "end": arguments.end, "files": [file_summary(file) for file in files]},
            summary=ngettext("%(count)s file modified in %(span)s", "%(count)s files modified in %(span)s", len(files))
            % {"count": len(files), "span": span},
        )
    hits = chunk_search(
        folder_id=context.folder_id,
        query=arguments.query,
        k=arguments.limit,
        filters=SearchFilters(modified_after=after, modified_before=before),
    )
    return ToolOutput(
        data={
            "query": arguments.query,
            "start": arguments.start,
            "end": arguments.end,
            "results": _passages(hits),
            "notice": DATA_NOTICE,
        },
        summary=_found(hits),
        trace=f'"{arguments.query}" modified {span}',
    )


def _rewritten(arguments: RewriteQueryInput, query: str, *, method: str) -> ToolOutput:
    return ToolOutput(
        data={"original_query": arguments.original_query, "rewritten_query": query, "method": method},
        summary=f'"{query}"',
        trace=f'"{arguments.original_query}" -> "{query}"',
    )


def hit_passage(hit: SearchHit) -> Passage:
    return Passage(
        file_id=hit.file_id,
        file_name=hit.file_name,
        path=hit.path,
        chunk_id=hit.chunk_id,
        text=hit.text,
        location=hit.location,
        score=hit.score,
    )


def _passages(hits: list[SearchHit]) -> list[Passage]:
    return [hit_passage(hit) for hit in hits]


def _found(hits: list[SearchHit]) -> str:
    """The step's line on the page, in its owner's language; its count stays first (the metrics read it)."""
    files = len({hit.file_id for hit in hits})
    from_files = ngettext("%(count)s file", "%(count)s files", files) % {"count": files}
    found = ngettext("%(count)s passage from %(files)s", "%(count)s passages from %(files)s", len(hits))
    return found % {"count": len(hits), "files": from_files}


SEARCH_TOOLS: tuple[Tool, ...] = (
    pydantic_tool(
        name="search_folder",
        description=(
            "Search the folder's indexed files (semantic + keyword). Returns documents, best first, "
            "each with file_id, file_name, path, a relevance score and its matching passages (chunks: "
            "numbered n, with location and text). Use it first, and again with other words when "
            "results miss the question; path_prefix and file_types narrow it to part of the folder."
        ),
        input_model=SearchFolderInput,
        run=search_folder,
        phase="searching",
        kind=ToolKind.SEARCH,
    ),
    pydantic_tool(
        name="rewrite_query",
        description=(
            "Reformulate a search query whose results were poor; then call search_folder with the "
            "rewritten_query. Say in feedback what was wrong with the results."
        ),
        input_model=RewriteQueryInput,
        run=rewrite_query,
        phase="rewriting",
    ),
    pydantic_tool(
        name="search_by_date_range",
        description=(
            "Files modified between two dates (inclusive). With a query, the best matching passages "
            "of those files; without, the files themselves, newest first."
        ),
        input_model=SearchByDateRangeInput,
        run=search_by_date_range,
        phase="searching",
        kind=ToolKind.SEARCH,
    ),
)

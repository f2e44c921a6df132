"""Reading documents as citable blocks: one (`read_document`, alias `get_file`) or several at once.

A block is one indexed chunk, in document order, with its location; its `block_id` is the chunk
id, so a block already seen in search results keeps the number it had there. A document longer
than the read budget shows the blocks that best match the focus query (the question by default).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from apps.chat.agent.context import Passage, estimate_tokens
from apps.chat.agent.registry import (
    DATA_NOTICE,
    NOT_FOUND,
    Tool,
    ToolContext,
    ToolInput,
    ToolKind,
    ToolOutput,
    pydantic_tool,
)
from apps.library.models import File
from apps.library.selectors import Block, file_blocks, folder_file_get, folder_files_get
from apps.llm.extractive_text import terms

READ_MAX_TOKENS = 2000
MULTI_READ_MAX_TOKENS = 4000
MULTI_READ_MIN_TOKENS = 500
MAX_DOCUMENTS = 5
# Chunks loaded to choose from; a longer document is read through its first this many.
MAX_BLOCKS_SCANNED = 2000
_FOCUS_DESCRIPTION = "Optional: what to look for, when the document is long. Defaults to the question."


class ReadDocumentInput(ToolInput):
    doc_id: int = Field(description="The file_id of a document from earlier results.")
    focus_query: str | None = Field(default=None, max_length=1000, description=_FOCUS_DESCRIPTION)


class GetFileInput(ToolInput):
    file_id: int = Field(description="The file_id of a document from earlier results.")


class ReadMultipleDocumentsInput(ToolInput):
    doc_ids: list[int] = Field(min_length=1, max_length=MAX_DOCUMENTS, description="file_ids to read, at most 5.")
    focus_query: str | None = Field(default=None, max_length=1000, description=_FOCUS_DESCRIPTION)


def read_document(arguments: ReadDocumentInput, context: ToolContext) -> ToolOutput:
    return _read_one(file_id=arguments.doc_id, focus=arguments.focus_query, context=context)


def get_file(arguments: GetFileInput, context: ToolContext) -> ToolOutput:
    return _read_one(file_id=arguments.file_id, focus=None, context=context)


def read_multiple_documents(arguments: ReadMultipleDocumentsInput, context: ToolContext) -> ToolOutput:
    file_ids = list(dict.fromkeys(arguments.doc_ids))
    files = folder_files_get(folder_id=context.folder_id, file_ids=file_ids)
    budget = max(MULTI_READ_MIN_TOKENS, MULTI_READ_MAX_TOKENS // len(file_ids))
    documents = [
        _document(file=files[file_id], focus=arguments.focus_query, budget=budget, context=context)
        if file_id in files
        else {"doc_id": file_id, "error": NOT_FOUND}
        for file_id in file_ids
    ]
    return ToolOutput(
        data={"documents": documents, "notice": DATA_NOTICE},
        summary=f"read {len(files)} of {len(file_ids)} documents",
    )


def _read_one(*, file_id: int, focus: str | None, context: ToolContext) -> ToolOutput:
    file = folder_file_get(folder_id=context.folder_id, file_id=file_id)
    if file is None:
        return ToolOutput.error(NOT_FOUND)
    document = _document(file=file, focus=focus, budget=READ_MAX_TOKENS, context=context)
    return ToolOutput(
        data={**document, "notice": DATA_NOTICE},
        summary=f"{file.path}: {len(document['blocks'])} of {document['total_blocks']} blocks",
    )


def _document(*, file: File, focus: str | None, budget: int, context: ToolContext) -> dict[str, Any]:
    blocks = file_blocks(folder_id=context.folder_id, file_id=file.pk, limit=MAX_BLOCKS_SCANNED)
    chosen = _choose(blocks, focus=focus or context.question, budget=budget)
    document: dict[str, Any] = {
        "file_id": file.pk,
        "file_name": file.name,
        "path": file.path,
        "mime_type": file.mime_type,
        "modified_time": file.modified_time,
        "total_blocks": len(blocks),
        "blocks": [
            Passage(
                file_id=file.pk,
                file_name=file.name,
                path=file.path,
                chunk_id=block.chunk_id,
                text=block.text,
                location=block.location,
                block=True,
            )
            for block in chosen
        ],
    }
    if not blocks:
        document["note"] = f"No indexed content (status {file.status}{': ' + file.error if file.error else ''})."
    elif len(chosen) < len(blocks):
        document["note"] = (
            f"Showing {len(chosen)} of {len(blocks)} blocks, those matching the focus best; "
            "read again with another focus_query for other parts."
        )
    return document


def _choose(blocks: list[Block], *, focus: str, budget: int) -> list[Block]:
    if sum(estimate_tokens(block.text) for block in blocks) <= budget:
        return blocks
    wanted = set(terms(focus))
    ranked = sorted(blocks, key=lambda block: (-len(wanted & set(terms(block.text))), block.chunk_index))
    chosen: list[Block] = []
    spent = 0
    for block in ranked:
        cost = estimate_tokens(block.text)
        if spent + cost <= budget or not chosen:
            chosen.append(block)
            spent += cost
    return sorted(chosen, key=lambda block: block.chunk_index)


DOCUMENT_TOOLS: tuple[Tool, ...] = (
    pydantic_tool(
        name="read_document",
        description=(
            "Read one document as numbered, citable blocks (block_id, location, text) when search "
            "passages are not enough. Long documents show the blocks matching focus_query."
        ),
        input_model=ReadDocumentInput,
        run=read_document,
        phase="reading_file",
        kind=ToolKind.READ,
    ),
    pydantic_tool(
        name="get_file",
        description="Same as read_document, by file_id.",
        input_model=GetFileInput,
        run=get_file,
        phase="reading_file",
        kind=ToolKind.READ,
    ),
    pydantic_tool(
        name="read_multiple_documents",
        description="Read up to 5 documents at once (e.g. to compare them); each as citable blocks.",
        input_model=ReadMultipleDocumentsInput,
        run=read_multiple_documents,
        phase="reading_file",
        kind=ToolKind.READ,
    ),
)

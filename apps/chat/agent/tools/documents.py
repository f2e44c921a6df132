"""Reading documents as citable blocks: one (`read_document`, alias `get_file`) or several at once.

A block is one indexed chunk, in document order, with its location; its `block_id` is the chunk
id, so a block already seen in search results keeps the number it had there. A document longer
than the read budget shows the blocks that best match the focus query (the question by default).
Every tool that reads one document is made by `document_reader_tool` (the inbox's query agent
names files by id or path with it), so all read alike.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import ngettext
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


class DocumentRef(ToolInput):
    """The arguments of a tool that reads one document: which file they name, and what to look for."""

    def file_id_in(self, folder_id: int) -> int | None:
        """The id of the file named, within the folder; None when there is none."""
        raise NotImplementedError

    def focus(self) -> str | None:
        return None


class ReadDocumentInput(DocumentRef):
    doc_id: int = Field(description="The file_id of a document from earlier results.")
    focus_query: str | None = Field(default=None, max_length=1000, description=_FOCUS_DESCRIPTION)

    def file_id_in(self, folder_id: int) -> int | None:
        return self.doc_id

    def focus(self) -> str | None:
        return self.focus_query


class GetFileInput(DocumentRef):
    file_id: int = Field(description="The file_id of a document from earlier results.")

    def file_id_in(self, folder_id: int) -> int | None:
        return self.file_id


class ReadMultipleDocumentsInput(ToolInput):
    doc_ids: list[int] = Field(min_length=1, max_length=MAX_DOCUMENTS, description="file_ids to read, at most 5.")
    focus_query: str | None = Field(default=None, max_length=1000, description=_FOCUS_DESCRIPTION)


def document_read(arguments: DocumentRef, context: ToolContext) -> ToolOutput:
    file_id = arguments.file_id_in(context.folder_id)
    file = folder_file_get(folder_id=context.folder_id, file_id=file_id) if file_id is not None else None
    if file is None:
        return ToolOutput.error(NOT_FOUND)
    document = _document(file=file, focus=arguments.focus(), budget=READ_MAX_TOKENS, context=context)
    return ToolOutput(
        data={**document, "notice": DATA_NOTICE},
        summary=ngettext(
            "%(path)s: %(count)s of %(total)s block",
            "%(path)s: %(count)s of %(total)s blocks",
            document["total_blocks"],
        )
        % {"path": file.path, "count": len(document["blocks"]), "total": document["total_blocks"]},
    )


def document_reader_tool(*, name: str, description: str, input_model: type[DocumentRef]) -> Tool:
    """A tool reading the one document its arguments name, as citable blocks."""
    return pydantic_tool(
        name=name,
        description=description,
        input_model=input_model,
        run=document_read,
        phase="reading_file",
        kind=ToolKind.READ,
    )


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
        summary=ngettext("read %(count)s of %(total)s document", "read %(count)s of %(total)s documents", len(file_ids))
        % {"count": len(files), "total": len(file_ids)},
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
    document_reader_tool(
        name="read_document",
        description=(
            "Read one document as numbered, citable blocks (block_id, location, text) when search "
            "passages are not enough. Long documents show the blocks matching focus_query."
        ),
        input_model=ReadDocumentInput,
    ),
    document_reader_tool(name="get_file", description="Same as read_document, by file_id.", input_model=GetFileInput),
    pydantic_tool(
        name="read_multiple_documents",
        description="Read up to 5 documents at once (e.g. to compare them); each as citable blocks.",
        input_model=ReadMultipleDocumentsInput,
        run=read_multiple_documents,
        phase="reading_file",
        kind=ToolKind.READ,
    ),
)

"""`get_document_summary`: a whole file in a few sentences, written by the model on demand."""

from __future__ import annotations

from django.utils.translation import gettext
from pydantic import Field

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
from apps.chat.summaries import document_summary_or_digest
from apps.library.selectors import folder_file_get


class DocumentSummaryInput(ToolInput):
    doc_id: int = Field(description="The file_id of a document from earlier results.")


def get_document_summary(arguments: DocumentSummaryInput, context: ToolContext) -> ToolOutput:
    file = folder_file_get(folder_id=context.folder_id, file_id=arguments.doc_id)
    if file is None:
        return ToolOutput.error(NOT_FOUND)
    summary = document_summary_or_digest(file=file)
    if not summary.text:
        return ToolOutput.error(f"{file.path} has no indexed content to summarise (status {file.status})")
    return ToolOutput(
        data={
            "file_id": file.pk,
            "file_name": file.name,
            "path": file.path,
            "summary": summary.text,
            "method": summary.method,
            "notice": DATA_NOTICE,
        },
        summary=gettext("%(path)s: summary (%(method)s)") % {"path": file.path, "method": summary.method},
        usage=summary.usage,
    )


SUMMARY_TOOLS: tuple[Tool, ...] = (
    pydantic_tool(
        name="get_document_summary",
        description=(
            "A few sentences summarising a whole document (what it is, main points, key figures). "
            "Use it to decide whether a document matters before reading it, or for overview questions."
        ),
        input_model=DocumentSummaryInput,
        run=get_document_summary,
        phase="reading_file",
        kind=ToolKind.READ,
    ),
)

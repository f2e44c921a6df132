"""The tools' synchronous bodies: the same selectors and services as the REST views, with the same
access rules (what the caller has no role on, or their token does not reach, is "not found").

They run in a worker thread (`apps.mcp.server`); scope checks and throttles happen there too.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.utils.translation import gettext as _

from apps.chat import services as chat_services
from apps.chat.messages import message_payload
from apps.chat.models import FINISHED_RUN_STATUSES, AgentRun
from apps.core.api import ApplicationError
from apps.library import document_selectors
from apps.library.access import file_access, folder_access, folders_visible
from apps.library.selectors import folder_mime_types
from apps.llm.sources import describe_location
from apps.mcp.types import (
    Answer,
    Caller,
    Document,
    DocumentChunk,
    FolderItem,
    FolderList,
    Passage,
    SearchResult,
    Source,
)
from apps.search.selectors import chunk_search
from apps.search.types import SearchFilters, SearchMode

# Chunks one read_document call returns: a few pages of text, enough to read around a cited passage
# without filling a model's context; `next_chunk` goes on from there.
READ_CHUNKS = 20


def folders_list(*, caller: Caller) -> FolderList:
    folders = folders_visible(user=caller.user).order_by("name", "pk")
    return FolderList(
        folders=[
            FolderItem(
                id=folder.pk,
                name=folder.name,
                role=folder.caller_role,  # type: ignore[attr-defined]  # annotated by folders_visible
                status=folder.status,
                files_indexed=folder.files_indexed,
            )
            for folder in folders
        ]
    )


def passages_search(
    *,
    caller: Caller,
    folder_id: int,
    query: str,
    k: int,
    mode: SearchMode,
    path_prefix: str | None,
    file_types: list[str],
) -> SearchResult:
    """As POST /api/folders/{id}/search, with the agent's file types: extensions, MIME types or prefixes."""
    folder = folder_access(user=caller.user, folder_id=folder_id)
    kinds = [kind.strip() for kind in file_types if kind.strip()]
    mime_types = tuple(sorted({mime for kind in kinds for mime in folder_mime_types(folder_id=folder.pk, kind=kind)}))
    if kinds and not mime_types:  # an empty filter would not filter: nothing of these types is here
        message = _("The folder has no files of type %(types)s.") % {"types": ", ".join(kinds)}
        return SearchResult(passages=[], words_matched=None, message=message)
    hits = chunk_search(
        folder_id=folder.pk,
        query=query,
        k=k,
        mode=mode,
        filters=SearchFilters(path_prefix=(path_prefix or "").lstrip("/") or None, mime_types=mime_types),
    )
    passages = [
        Passage(
            chunk_id=hit.chunk_id,
            file_id=hit.file_id,
            file_name=hit.file_name,
            path=hit.path,
            location=hit.location,
            location_label=describe_location(hit.location),
            text=hit.text,
            score=round(hit.score, 4),
            url=caller.document_url(file_id=hit.file_id, chunk_id=hit.chunk_id),
        )
        for hit in hits
    ]
    words_matched = None if mode == SearchMode.VECTOR else any(hit.keyword_rank for hit in hits)
    return SearchResult(passages=passages, words_matched=words_matched, message="" if hits else _("Nothing matched."))


def document_read(*, caller: Caller, file_id: int, chunk_id: int | None) -> Document:
    file = file_access(user=caller.user, file_id=file_id)
    chunks = document_selectors.file_chunks(file=file)
    if chunk_id is not None:
        start = document_selectors.file_chunk_get(file=file, chunk_id=chunk_id)
        if start is None:
            raise Http404(_("Chunk %(chunk)d is not in file %(file)d.") % {"chunk": chunk_id, "file": file_id})
        chunks = chunks.filter(chunk_index__gte=start.chunk_index)
    page = list(chunks[: READ_CHUNKS + 1])
    return Document(
        file_id=file.pk,
        folder_id=file.folder_id,
        file_name=file.name,
        path=file.path,
        mime_type=file.mime_type,
        url=caller.document_url(file_id=file.pk, chunk_id=chunk_id),
        chunk_count=file.chunk_count,
        chunks=[
            DocumentChunk(
                chunk_id=chunk.pk,
                chunk_index=chunk.chunk_index,
                location=chunk.location or {},
                location_label=describe_location(chunk.location or {}),
                text=chunk.text,
            )
            for chunk in page[:READ_CHUNKS]
        ],
        next_chunk=page[READ_CHUNKS].pk if len(page) > READ_CHUNKS else None,
    )


def question_ask(*, caller: Caller, folder_id: int, question: str, agent_mode: bool) -> AgentRun:
    """Start a run as the streaming chat API does: saved, then executed in a thread of this process
    (the asker is waiting on this call), its events on the run's channel."""
    folder = folder_access(user=caller.user, folder_id=folder_id)
    run = chat_services.chat_start(
        user=caller.user, folder=folder, text=question, agent_mode=agent_mode, language=caller.language
    )
    chat_services.run_start_thread(run=run)
    return run


def run_answer(*, caller: Caller, run_id: str) -> Answer | None:
    """The run's saved answer once it has one, None while it runs (for a run whose events were lost)."""
    run = AgentRun.objects.select_related("answer").filter(pk=run_id, owner_id=caller.user.pk).first()
    if run is None or (run.answer is None and run.status in FINISHED_RUN_STATUSES):
        raise ApplicationError(_("The run failed."))  # why is on the run for operators, not for the asker
    if run.answer is None:
        return None
    return answer_of(caller=caller, run_id=run_id, payload=message_payload(run.answer))


def answer_of(*, caller: Caller, run_id: str, payload: dict[str, Any]) -> Answer:
    """The tool's answer from a `message` event's payload (`apps.chat.messages.message_payload`)."""
    metadata = payload.get("metadata") or {}
    content = payload.get("content") or {}
    conversation_id = int(payload["conversation_id"])
    return Answer(
        answer=str(content.get("text", payload.get("text", ""))),
        sources=[
            Source(
                n=citation["n"],
                file_id=citation["file_id"],
                file_name=citation["file_name"],
                path=citation["path"],
                location=citation.get("location", ""),
                chunk_id=citation.get("chunk_id"),
                snippet=citation.get("snippet", ""),
                url=caller.document_url(file_id=citation["file_id"], chunk_id=citation.get("chunk_id")),
            )
            for citation in payload.get("citations") or []
        ],
        notice=str(metadata.get("notice") or metadata.get("fallback_reason") or ""),
        options=[str(option) for option in content.get("options") or []],
        conversation_id=conversation_id,
        conversation_url=f"{caller.site_url}/conversations/{conversation_id}/",
        run_id=run_id,
    )

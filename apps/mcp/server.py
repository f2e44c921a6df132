"""The MCP server (the official SDK's `MCPServer`): four tools over the folders a caller may read.

One server per transport: `apps.mcp.http` serves it at /mcp for personal tokens, `manage.py mcp`
over stdio for one user. `caller_of` says who calls (from the request, or the command's user).
Each tool checks its token scope (a tool error naming the scope), the REST API's throttle for the
same scope, then runs its Django body in a worker thread; what the caller may not see is "not found".
Results and errors are in the caller's language (`Caller.language`); the instructions, tool
descriptions and argument schemas stay English, one text for every user: models read them to choose
and call the tools.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from django.conf import settings
from django.http import Http404
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field
from rest_framework.throttling import SimpleRateThrottle

from apps.chat.serializers import MAX_MESSAGE_CHARS
from apps.core.api import ApplicationError
from apps.core.models import TokenScope
from apps.core.tokens import personal_token_scope_check
from apps.mcp import tools
from apps.mcp.asking import answer_follow
from apps.mcp.threads import orm_call
from apps.mcp.types import Answer, Caller, Document, FolderList, SearchResult
from apps.search.selectors import K_MAX
from apps.search.types import SearchMode

T = TypeVar("T")
CallerOf = Callable[[Context], Caller]

INSTRUCTIONS = (
    "Folder Chat: the user's folders of documents, indexed for search. list_folders gives the folder ids; "
    "search finds passages in one folder; ask answers a question from a folder with [n] citations; "
    "read_document reads a file's text in order (from a passage's chunk_id when given)."
)


class _UserThrottle(SimpleRateThrottle):
    """The REST API's rate for a throttle scope, on the key DRF's ScopedRateThrottle gives the user:
    a tool and its endpoint spend one budget (per process, as the REST throttle counts)."""

    def __init__(self, *, scope: str, user_id: object) -> None:
        self.scope = scope
        self._user_id = user_id
        super().__init__()

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self._user_id}


def _throttle_check(*, caller: Caller, scope: str) -> None:
    throttle = _UserThrottle(scope=scope, user_id=caller.user.pk)
    # Keyed by the user (get_cache_key above): there is no DRF request or view here.
    if not throttle.allow_request(None, None):  # type: ignore[arg-type]
        seconds = math.ceil(throttle.wait() or 1)
        raise ApplicationError(
            ngettext(
                "Too many requests; try again in %(seconds)d second.",
                "Too many requests; try again in %(seconds)d seconds.",
                seconds,
            )
            % {"seconds": seconds}
        )


async def _tool_call(
    caller: Caller, function: Callable[..., T], *, scope: str, throttle: str | None = None, **kwargs: Any
) -> T:
    """Scope, throttle, then the tool's body, in the caller's language (the body's thread too: it runs in
    a copy of this context); refusals become tool errors the client's model reads."""
    with translation.override(caller.language):
        try:
            personal_token_scope_check(token=caller.token, scope=scope)
            if throttle is not None:
                _throttle_check(caller=caller, scope=throttle)
            return await orm_call(function, caller=caller, **kwargs)
        except ApplicationError as exc:
            raise ToolError(exc.message) from exc
        except Http404 as exc:
            raise ToolError(str(exc) or _("Not found.")) from exc


FolderId = Annotated[int, Field(description="A folder's id, from list_folders.")]


def mcp_server(*, caller_of: CallerOf) -> MCPServer:
    server: MCPServer = MCPServer("folder-chat", title="Folder Chat", instructions=INSTRUCTIONS)

    @server.tool(name="list_folders", description="The folders you may read: ids, names and your role.")
    async def list_folders(ctx: Context) -> FolderList:
        return await _tool_call(caller_of(ctx), tools.folders_list, scope=TokenScope.READ)

    @server.tool(
        name="search",
        description="Passages of one folder's documents matching a query, best first, each with its file "
        "name, location and the URL of its document page. Needs the token's 'search' scope.",
    )
    async def search(
        folder_id: FolderId,
        query: Annotated[str, Field(max_length=settings.SEARCH_MAX_QUERY_CHARS, description="What to look for.")],
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=K_MAX, description="How many passages.")] = 10,
        mode: Annotated[
            SearchMode,
            Field(description="hybrid (words and meaning), keyword (the words) or vector (meaning only)."),
        ] = SearchMode.HYBRID,
        path_prefix: Annotated[
            str | None, Field(max_length=1024, description="Only files under this path, e.g. taxes/2024/.")
        ] = None,
        file_types: Annotated[
            list[str] | None,
            Field(
                max_length=50, description='Only these kinds: extensions ("pdf"), MIME types or prefixes ("image/").'
            ),
        ] = None,
    ) -> SearchResult:
        return await _tool_call(
            caller_of(ctx),
            tools.passages_search,
            scope=TokenScope.SEARCH,
            throttle="search",
            folder_id=folder_id,
            query=query,
            k=k,
            mode=mode,
            path_prefix=path_prefix,
            file_types=file_types or [],
        )

    @server.tool(
        name="ask",
        description="Ask a folder a question: the answer citing its sources as [n], with the sources (file, "
        "location, URL). Takes seconds; progress notifications tell the steps. Needs the 'chat' scope.",
    )
    async def ask(
        folder_id: FolderId,
        question: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS)],
        ctx: Context,
        agent_mode: Annotated[
            bool, Field(description="Let the model plan several searches and read documents (slower).")
        ] = False,
    ) -> Answer:
        caller = caller_of(ctx)
        run = await _tool_call(
            caller,
            tools.question_ask,
            scope=TokenScope.CHAT,
            throttle="chat",
            folder_id=folder_id,
            question=question,
            agent_mode=agent_mode,
        )
        return await answer_follow(ctx=ctx, caller=caller, run_id=str(run.pk))

    @server.tool(
        name="read_document",
        description="A file's extracted text, chunk by chunk in document order with locations, from its start "
        "or from a chunk (a passage's chunk_id); next_chunk continues.",
    )
    async def read_document(
        file_id: Annotated[int, Field(description="A file's id, from search or ask.")],
        ctx: Context,
        chunk: Annotated[int | None, Field(description="Read from this chunk id on.")] = None,
    ) -> Document:
        return await _tool_call(
            caller_of(ctx), tools.document_read, scope=TokenScope.READ, file_id=file_id, chunk_id=chunk
        )

    return server

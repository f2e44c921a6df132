"""The official MCP SDK's client against this project's MCP server: over HTTP at a running server's
/mcp with a personal token as the bearer, or over stdio by starting `manage.py mcp --user NAME`."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp_types import CallToolResult, TextContent

from tests.support.servers import BASE_DIR


@asynccontextmanager
async def mcp_over_http(
    url: str, *, secret: str | None, mode: str = "auto", headers: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """A connected client of `url`/mcp, sending `headers` too; `mode` "legacy" speaks the initialize
    handshake (the protocol revisions today's desktop clients use), "auto" the newest both sides know."""
    headers = {**(headers or {}), **({"Authorization": f"Bearer {secret}"} if secret else {})}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


@asynccontextmanager
async def mcp_over_stdio(
    *, username: str, env: dict[str, str], log_path: Path, mode: str = "auto"
) -> AsyncIterator[Client]:
    """`manage.py mcp --user <username>` as a desktop client starts it; its stderr into `log_path`."""
    params = StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp", "--user", username], env=env, cwd=BASE_DIR
    )
    with log_path.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=120) as client:
            yield client


# The first request of a raw HTTP session (tests that look at the transport itself).
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def call_over_http(
    url: str,
    *,
    secret: str | None,
    tool: str,
    arguments: dict[str, Any] | None = None,
    mode: str = "auto",
    progress: ProgressFnT | None = None,
    headers: dict[str, str] | None = None,
) -> CallToolResult:
    """One tool call from a fresh client (from synchronous test code: the ORM stays off the loop)."""

    async def call() -> CallToolResult:
        async with mcp_over_http(url, secret=secret, mode=mode, headers=headers) as client:
            return await client.call_tool(tool, arguments or {}, progress_callback=progress)

    return anyio.run(call)


def structured(result: CallToolResult) -> dict[str, Any]:
    """A successful call's structured content, which its text content repeats as JSON."""
    assert not result.is_error, error_text(result)
    assert result.structured_content is not None
    assert json.loads(_text(result)) == result.structured_content
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    return _text(result)


def _text(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))

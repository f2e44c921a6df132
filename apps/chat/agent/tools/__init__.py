"""The folder-chat agent's tools: built-ins, one module per family, plus the folder's webhooks."""

from __future__ import annotations

from apps.chat.agent.registry import Tool, ToolRegistry
from apps.chat.agent.tools.answer import ANSWER_TOOLS
from apps.chat.agent.tools.documents import DOCUMENT_TOOLS
from apps.chat.agent.tools.files import FILE_TOOLS
from apps.chat.agent.tools.images import IMAGE_TOOLS
from apps.chat.agent.tools.rerank import RERANK_TOOLS
from apps.chat.agent.tools.search import SEARCH_TOOLS
from apps.chat.agent.tools.summaries import SUMMARY_TOOLS
from apps.chat.agent.tools.webhooks import webhook_tools

BUILTIN_TOOLS: tuple[Tool, ...] = (
    *SEARCH_TOOLS,
    *RERANK_TOOLS,
    *DOCUMENT_TOOLS,
    *SUMMARY_TOOLS,
    *IMAGE_TOOLS,
    *FILE_TOOLS,
    *ANSWER_TOOLS,
)
BUILTIN_TOOL_NAMES = frozenset(tool.name for tool in BUILTIN_TOOLS)


def folder_tools(*, folder_id: int) -> ToolRegistry:
    """Every built-in tool plus the enabled, valid webhook tools of this folder."""
    return ToolRegistry(tools=BUILTIN_TOOLS).extended(webhook_tools(folder_id=folder_id, reserved=BUILTIN_TOOL_NAMES))

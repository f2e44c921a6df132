"""The inbox agents without a model: deterministic players of the same tool protocol.

The extractive provider knows the folder-chat tools only, so with it (no keys) each inbox agent
runs one of these instead, through the same loop, tools and events: the query planner searches
(or lists recent files, or counts; asked for a summary, summarises the best match), lets the
extractive provider write the cited answer from what was found, and replies with file cards; the
organize planner reads the guideline and the tree, asks `suggest_organization` (whose policy picks
the folder) for each file, and replies.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.llm.extractive import NOTHING_RELEVANT, ExtractiveProvider
from apps.llm.extractive_agent import Step, read_turn
from apps.llm.types import LLMResponse, Message, StopReason, TextCallback, ToolCall, ToolSpec

MAX_CARDS = 5
_STATS = re.compile(r"\b(how many|count|number of|stats|statistics|total)\b", re.IGNORECASE)
# "What's in my inbox?", "list the inbox", "which files are waiting?": the inbox, not a search.
_INBOX = re.compile(r"\b(in|of) (my |the )?inbox\b|\b(list|show)( me)? (my |the )?inbox\b|\bwaiting\b", re.IGNORECASE)
_SUMMARIZE = re.compile(r"\b(summari[sz]e|summary|sum up|overview)\b", re.IGNORECASE)
_RECENT = re.compile(r"\b(recent|latest|newest|last (few|added|week|month)|new files)\b", re.IGNORECASE)
_TYPES = (
    (re.compile(r"\b(photo|photos|image|images|picture|pictures|scan|scans|png|jpe?g)\b", re.IGNORECASE), "image/"),
    (re.compile(r"\bpdfs?\b", re.IGNORECASE), "application/pdf"),
)
_ids = itertools.count(1)


class _Planner:
    """Plans every turn from the transcript alone: prompts, limits and streaming mean nothing to it,
    and every turn is tool calls (respond_to_user ends the loop)."""

    model = "offline-planner"

    def complete(
        self,
        *,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        on_text: TextCallback | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> LLMResponse:
        calls = self._plan(messages)
        return LLMResponse(text="", tool_calls=tuple(calls), stop_reason=StopReason.TOOL_USE, model=self.model)

    def _plan(self, messages: Sequence[Message]) -> Sequence[ToolCall]:
        raise NotImplementedError

    def _call(self, name: str, arguments: dict[str, Any]) -> ToolCall:
        return ToolCall(id=f"inbox_{next(_ids)}", name=name, arguments=arguments)


class OfflineQueryPlanner(_Planner):
    def __init__(self, *, search_query: str, answerer: ExtractiveProvider | None = None) -> None:
        self.search_query = search_query
        self.answerer = answerer or ExtractiveProvider()

    def _plan(self, messages: Sequence[Message]) -> Sequence[ToolCall]:
        turn = read_turn(messages)
        if not turn.steps:
            return [self._first_call(turn.question)]
        step = turn.steps[-1]
        payload = step.payload() or {}
        if step.call.name == "get_stats":
            return [self._respond(_stats_text(payload), [])]
        if step.call.name == "list_inbox":
            files = payload.get("files", [])
            return [self._respond(_inbox_text(files), [item["file_id"] for item in files])]
        if step.call.name == "summarize":
            summaries = payload.get("summaries", [])
            text = "\n\n".join(str(item.get("summary", "")) for item in summaries) or _("I could not summarise it.")
            return [
                self._respond(text, [item["file_id"] if "file_id" in item else item["fileId"] for item in summaries])
            ]
        if step.call.name == "search_files" and _SUMMARIZE.search(turn.question) and payload.get("results"):
            return [self._call("summarize", {"files": [payload["results"][0]["file_id"]]})]
        if step.call.name == "list_recent_files":
            files = payload.get("files", [])[:MAX_CARDS]
            names = ", ".join(str(item.get("file_name", "")) for item in files)
            text = _("Your most recent files: %(names)s.") % {"names": names} if files else _("There are no files yet.")
            return [self._respond(text, [item["file_id"] for item in files])]
        return [self._answer_search(messages, payload)]

    def _first_call(self, question: str) -> ToolCall:
        if _INBOX.search(question):
            return self._call("list_inbox", {})
        if _STATS.search(question):
            return self._call("get_stats", {})
        if _RECENT.search(question):
            return self._call("list_recent_files", {"limit": MAX_CARDS, **_type_of(question)})
        return self._call("search_files", {"query": self.search_query or question, "limit": 8, **_type_of(question)})

    def _answer_search(self, messages: Sequence[Message], payload: dict[str, Any]) -> ToolCall:
        results = payload.get("results", [])
        query = str(payload.get("query", self.search_query))
        if not results:
            return self._respond(_('I found nothing matching "%(query)s". Try other words?') % {"query": query}, [])
        answer = self.answerer.complete(messages=messages, tools=())
        by_path = {item["path"]: item["file_id"] for item in results}
        # The cards are the files the answer cites; with nothing cited, the best matches.
        cited = [by_path[source.path] for source in answer.citation_sources if source.path in by_path]
        files = list(dict.fromkeys(cited))[:MAX_CARDS] or [item["file_id"] for item in results[:MAX_CARDS]]
        text = answer.text
        if text == NOTHING_RELEVANT:
            text = _('Nothing answers that directly, but these files match "%(query)s" best:') % {"query": query}
        return self._respond(text, files)

    def _respond(self, message: str, files: list[int]) -> ToolCall:
        return self._call("respond_to_user", {"message": message, "files": files})


class OfflineOrganizePlanner(_Planner):
    def __init__(self, *, paths: Sequence[str], target: str | None) -> None:
        self.paths = list(paths)
        self.target = target

    def _plan(self, messages: Sequence[Message]) -> Sequence[ToolCall]:
        steps = read_turn(messages).steps
        if not steps:
            return [self._call("read_guideline", {}), self._call("get_folder_tree", {"depth": 2})]
        suggested = [step for step in steps if step.call.name == "suggest_organization"]
        if not suggested:
            target = {"target": self.target} if self.target else {}
            return [self._call("suggest_organization", {"path": path, **target}) for path in self.paths]
        return [self._call("respond_to_user", {"message": organize_summary(suggested)})]


def organize_summary(steps: Sequence[Step]) -> str:
    lines: list[str] = []
    made = 0
    for step in steps:
        path = step.call.arguments.get("path", "the file")
        payload = _json(step.result.content) if step.result is not None else None
        if step.result is None or step.result.is_error or not isinstance(payload, dict):
            # The tool's error is for the model; the user reads its `for_user`, when it has one.
            reason = payload.get("for_user") if isinstance(payload, dict) else None
            reason = reason or _("Something went wrong; try again.")
            lines.append(_("- %(path)s: no suggestion. %(reason)s") % {"path": path, "reason": reason})
            continue
        made += 1
        sure = round(float(payload["confidence"]) * 100)
        lines.append(
            _("- %(path)s → %(target)s (%(sure)s%% sure): %(reasoning)s")
            % {"path": path, "target": payload["target"], "sure": sure, "reasoning": payload["reasoning"]}
        )
    if made:
        ask = (
            _("Say yes to move it, or no to keep it in the inbox.")
            if made == 1
            else _("Say yes to move them all, or no to keep them in the inbox; each also has its own buttons.")
        )
        lines.append(ask)
    return "\n".join(lines)


def _stats_text(payload: dict[str, Any]) -> str:
    if not payload:
        return _("I could not read the folder's totals.")
    types = ", ".join(f"{count} {mime}" for mime, count in list(payload.get("top_mime_types", {}).items())[:4])
    return _("This folder has %(files)s files (%(types)s) in %(chunks)s indexed passages.") % {
        "files": payload.get("files", 0),
        "types": types,
        "chunks": payload.get("chunks", 0),
    }


def _inbox_text(files: Sequence[dict[str, Any]]) -> str:
    if not files:
        return _("Your inbox is empty: nothing is waiting to be sorted.")
    lines = [f"- {str(item['path']).rsplit('/', 1)[-1]}: {item['state']}" for item in files]
    waiting = ngettext("%(count)s file is waiting in inbox/:", "%(count)s files are waiting in inbox/:", len(files))
    return "\n".join([waiting % {"count": len(files)}, *lines])


def _type_of(question: str) -> dict[str, str]:
    for pattern, mime in _TYPES:
        if pattern.search(question):
            return {"type": mime}
    return {}


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None

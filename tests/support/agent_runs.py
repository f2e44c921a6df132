"""Running the agent in-process and a local receiver for its webhook tools."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from apps.chat.models import Message
from apps.chat.services import chat_start, run_execute
from apps.library.models import Folder
from apps.llm.types import LLMRequest, LLMResponse, Usage
from apps.search.selectors import chunk_search
from tests.support.agent_requests import number_of

QUESTION = "How much federal income tax was withheld on my 2024 W-2?"
WITHHELD_2024 = "withheld on the 2024 W-2"

# Another user's text: no answer, tool result or prompt of the owner's run may ever show it.
SECRET_TEXT = "The confidential merger price agreed with Globex is 31 million dollars."


def ask(folder: Folder, text: str, *, agent_mode: bool = True, conversation=None):
    run = chat_start(user=folder.owner, folder=folder, text=text, agent_mode=agent_mode, conversation=conversation)
    events: list = []
    run = run_execute(run_id=run.pk, on_event=events.append)
    return run, events


def first_search_number(folder: Folder, query: str, needle: str) -> int:
    """The number the loop gives a passage when `query` is the run's first search that finds it."""
    hits = chunk_search(folder_id=folder.pk, query=query, k=8)
    return next(n for n, hit in enumerate(hits, start=1) if needle in hit.text)


def tool_names(body: dict) -> set[str]:
    """The tools a request to the wire stub offered, in either API's format."""
    return {tool["function"]["name"] if "function" in tool else tool["name"] for tool in body.get("tools", [])}


def tool_results(events) -> list[dict]:
    return [event.data for event in events if event.type == "tool_result"]


def cite(needle: str, template: str = "Federal income tax withheld was 12,300 dollars [{n}].", **usage: int):
    """A scripted model turn that answers citing the passage holding ``needle``."""

    def respond(request: LLMRequest) -> LLMResponse:
        return LLMResponse(text=template.format(n=number_of(request, needle)), usage=Usage(**usage))

    return respond


def answer_message(run) -> Message:
    return Message.objects.get(pk=run.answer_id)


@dataclass
class Hook:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)


class _HookHandler(BaseHTTPRequestHandler):
    hook: Hook

    def log_message(self, format: str, *args: Any) -> None:
        """Silent."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.hook.requests.append(
            {"path": self.path, "body": json.loads(body or b"null"), "headers": dict(self.headers)}
        )
        if self.path == "/slow":
            time.sleep(2)
        if self.path == "/big":
            self._send(200, b'{"blob": "' + b"x" * (100 * 1024) + b'"}')
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://example.com/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/fail":
            self._send(500, b'{"detail": "boom"}')
        else:
            self._send(200, json.dumps({"ok": True, "received": json.loads(body or b"null")}).encode())

    def _send(self, status: int, data: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first (timeout or size cap)


@pytest.fixture
def hook_server(settings) -> Iterator[Hook]:
    """A webhook receiver on 127.0.0.1, which is the only allowed host."""
    hook = Hook(url="")
    handler = type("Handler", (_HookHandler,), {"hook": hook})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    hook.url = f"http://127.0.0.1:{server.server_address[1]}"
    settings.WEBHOOK_TOOL_ALLOWED_HOSTS = ["127.0.0.1"]
    try:
        yield hook
    finally:
        server.shutdown()
        server.server_close()

"""Agent fixtures: a folder whose files answer distinct questions, another user's folder, providers.

Tools run in worker threads with their own database connections, so tests that run the loop are
transactional: rows created in a test's open transaction would be invisible to those threads.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from apps.chat.services import chat_start, run_execute
from apps.library.models import File, Folder
from tests.chat.conftest import add_file, make_folder

LIBRARY: dict[str, tuple[dt.date, list[tuple[str, dict]]]] = {
    "finance/W2_2024.pdf": (
        dt.date(2025, 1, 20),
        [
            ("The W-2 form for 2024 reports total wages of 84,500 dollars paid by Acme Corporation.", {"page": 1}),
            ("Federal income tax withheld on the 2024 W-2 was 12,300 dollars.", {"page": 2}),
        ],
    ),
    "finance/W2_2023.pdf": (
        dt.date(2024, 1, 25),
        [
            ("The W-2 form for 2023 reports total wages of 79,000 dollars paid by Acme Corporation.", {"page": 1}),
            ("Federal income tax withheld on the 2023 W-2 was 11,100 dollars.", {"page": 2}),
        ],
    ),
    "recipes/pancakes.md": (
        dt.date(2023, 6, 1),
        [("Pancakes need two cups of flour, two eggs and one and a half cups of milk.", {"heading": "Ingredients"})],
    ),
    "travel/passport.txt": (
        dt.date(2025, 2, 3),
        [("The passport renewal appointment is booked at the consulate on March 3.", {})],
    ),
}
SECRET_TEXT = "The confidential merger price agreed with Globex is 31 million dollars."


@dataclass
class Library:
    folder: Folder
    files: dict[str, File]

    def file(self, name: str) -> File:
        return next(file for path, file in self.files.items() if path.endswith(name))


def add_dated_file(*, folder: Folder, path: str, modified: dt.date, chunks: list[tuple[str, dict]]) -> File:
    file = add_file(folder=folder, path=path, chunks=chunks)
    file.modified_time = dt.datetime.combine(modified, dt.time(12), tzinfo=dt.UTC)
    file.mime_type = {"pdf": "application/pdf", "md": "text/markdown"}.get(path.rsplit(".", 1)[-1], "text/plain")
    file.size = sum(len(text) for text, _ in chunks)
    file.save(update_fields=["modified_time", "mime_type", "size"])
    return file


@pytest.fixture
def library(user) -> Library:
    folder = make_folder(user)
    return Library(
        folder=folder,
        files={
            path: add_dated_file(folder=folder, path=path, modified=modified, chunks=chunks)
            for path, (modified, chunks) in LIBRARY.items()
        },
    )


@pytest.fixture
def secret_file(other_user) -> File:
    """Another user's file, which no tool of `library`'s conversation may ever show."""
    folder = make_folder(other_user, name="private")
    return add_dated_file(
        folder=folder, path="deals/merger.txt", modified=dt.date(2025, 1, 1), chunks=[(SECRET_TEXT, {})]
    )


def ask(folder: Folder, text: str, *, agent_mode: bool = True, conversation=None):
    run = chat_start(user=folder.owner, folder=folder, text=text, agent_mode=agent_mode, conversation=conversation)
    events: list = []
    run = run_execute(run_id=run.pk, on_event=events.append)
    return run, events


def tool_results(events) -> list[dict]:
    return [event.data for event in events if event.type == "tool_result"]


# -- a local HTTP server for webhook tools ----------------------------------------------------------


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

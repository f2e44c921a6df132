"""Asking through the chat API in this process: `POST /api/folders/{id}/chat` with
`Accept: text/event-stream`, as the page and API clients stream an answer. The run executes in a
thread of this process, as in a web process, so the tests using it must be transactional."""

from __future__ import annotations

import warnings
from typing import Any

from apps.library.models import Folder
from tests.support.sse_client import Received, parse_sse


def ask_streamed(client: Any, folder: Folder, **body: Any) -> tuple[str, list[Received]]:
    """The run's id and its events up to `done` or `error` (heartbeat comments left out)."""
    response = client.post(f"/api/folders/{folder.pk}/chat", body, format="json", HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 200, response.content
    with warnings.catch_warnings():
        # The event stream is an async generator; the test client reads it whole, synchronously.
        warnings.filterwarnings("ignore", message="StreamingHttpResponse must consume asynchronous iterators")
        text = b"".join(response).decode()
    events = [item for item in parse_sse(text.splitlines()) if item.type != "comment"]
    return response["X-Run-Id"], events


def of_type(events: list[Received], type: str) -> list[dict[str, Any]]:
    return [event.data for event in events if event.type == type]

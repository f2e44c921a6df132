"""bench/ops/load.py's clients: searches, chats followed over SSE, and the indexing folder's progress.

Each client loops until the window ends and records what it saw in `Results`: search times,
each chat's event ids and text as received, errors by kind.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx

TERMINAL = ("done", "error")
PROGRESS_EVERY_SECONDS = 5.0


@dataclass
class Window:
    start: float
    end: float
    drain_end: float


@dataclass
class ChatStream:
    """One chat: the POST and its run's SSE stream, as the client saw them."""

    started: float  # monotonic, before the POST
    run_id: str = ""
    first_event_s: float | None = None
    final_event_s: float | None = None
    ids: list[str] = field(default_factory=list)
    unsaved: list[str] = field(default_factory=list)  # events sent without an id (the log was missing)
    text: str = ""  # the text_delta events, joined
    message_text: str | None = None
    message_id: int | None = None
    terminal: str = ""
    failure: str = ""  # why the client stopped without a terminal event
    stopped_at: float = 0.0  # wall clock, comparable with the ms timestamps of Redis stream ids


@dataclass
class Results:
    search_ms: list[float] = field(default_factory=list)
    searches_in_window: int = 0
    chats: list[ChatStream] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    window: Window | None = None
    # (seconds into the window, files indexed, files total, folder status, 1-min load average)
    progress: list[tuple[float, int, int, str, float]] = field(default_factory=list)


async def sse_events(response: httpx.Response) -> AsyncIterator[tuple[str, str, str]]:
    """(id, type, data) per event; the id is "" for an event sent without one. Comments are skipped."""
    event_id, event_type, data = "", "", []
    async for line in response.aiter_lines():
        if not line:
            if data:
                yield event_id, event_type or "message", "\n".join(data)
            event_id, event_type, data = "", "", []
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "id":
            event_id = value
        elif name == "event":
            event_type = value
        elif name == "data":
            data.append(value)


async def chat_once(client: httpx.AsyncClient, folder_id: int, question: str, stream: ChatStream) -> None:
    response = await client.post(f"/api/folders/{folder_id}/chat", json={"message": question})
    if response.status_code != 202:
        stream.failure = f"chat POST {response.status_code}"
        return
    accepted = response.json()
    stream.run_id = str(accepted["run_id"])
    async with client.stream("GET", accepted["events_url"]) as events:
        if events.status_code != 200:
            stream.failure = f"events GET {events.status_code}"
            return
        async for event_id, event_type, data in sse_events(events):
            elapsed = time.monotonic() - stream.started
            if stream.first_event_s is None:
                stream.first_event_s = elapsed
            if event_id:
                stream.ids.append(event_id)
            else:
                stream.unsaved.append(event_type)
            payload = json.loads(data)
            if event_type == "text_delta":
                stream.text += payload["text"]
            elif event_type == "message":
                stream.message_text, stream.message_id = payload["text"], payload["id"]
            elif event_type in TERMINAL:
                stream.terminal, stream.final_event_s = event_type, elapsed
                return
    stream.failure = "events stream closed before a terminal event"


async def chat_client(
    client: httpx.AsyncClient, folder_id: int, questions: list[str], seed: int, window: Window, results: Results
) -> None:
    rng = random.Random(seed)
    while time.monotonic() < window.end:
        stream = ChatStream(started=time.monotonic())
        results.chats.append(stream)
        try:
            question = f"What do the notes say about {rng.choice(questions)}?"
            await asyncio.wait_for(chat_once(client, folder_id, question, stream), window.drain_end - stream.started)
        except TimeoutError:
            stream.failure = "no terminal event by the end of the drain"
        except httpx.HTTPError as exc:
            stream.failure = f"chat {type(exc).__name__}"
        stream.stopped_at = time.time()
        if stream.failure:
            await asyncio.sleep(0.2)  # a failing server is not hammered in a tight loop


async def search_client(
    client: httpx.AsyncClient, folder_id: int, queries: list[str], seed: int, window: Window, results: Results
) -> None:
    rng = random.Random(seed)
    while time.monotonic() < window.end:
        body = {"query": rng.choice(queries), "mode": "hybrid", "k": 10}
        started = time.monotonic()
        try:
            response = await client.post(f"/api/folders/{folder_id}/search", json=body)
        except httpx.HTTPError as exc:
            results.errors[f"search {type(exc).__name__}"] += 1
            await asyncio.sleep(0.2)
            continue
        finished = time.monotonic()
        if response.status_code != 200:
            results.errors[f"search {response.status_code}"] += 1
            await asyncio.sleep(0.2)
            continue
        results.search_ms.append((finished - started) * 1000)
        results.searches_in_window += finished <= window.end


async def progress_sampler(client: httpx.AsyncClient, folder_id: int, window: Window, results: Results) -> None:
    """The indexed folder's counters through the API, every few seconds and at the end of the window."""
    offset = 0.0
    while True:
        # Planned times, not sleeps between samples: asyncio may wake a hair early, and a sample
        # taken just before the end would otherwise be followed by a second one just after it.
        await asyncio.sleep(max(0.0, window.start + offset - time.monotonic()))
        await progress_sample(client, folder_id, offset, results)
        if offset >= window.end - window.start:
            return
        offset = min(offset + PROGRESS_EVERY_SECONDS, window.end - window.start)


async def progress_sample(client: httpx.AsyncClient, folder_id: int, offset: float, results: Results) -> None:
    try:
        response = await client.get(f"/api/folders/{folder_id}")
    except httpx.HTTPError as exc:
        results.errors[f"folder GET {type(exc).__name__}"] += 1
        return
    if response.status_code != 200:
        results.errors[f"folder GET {response.status_code}"] += 1
        return
    folder = response.json()
    row = (offset, folder["files_indexed"], folder["files_total"], folder["status"], os.getloadavg()[0])
    results.progress.append(row)

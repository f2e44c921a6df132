"""A folder's events over SSE through a real ASGI server (uvicorn) and Redis, on the test database."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from apps.core.events import events_after, folder_channel
from apps.library.indexing import folder_index
from apps.library.sync import folder_sync
from tests.support.files import write
from tests.support.sse_client import Received, parse_sse
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db(transaction=True)


def read_events(server, folder_id: int, *, token: str, until: int, headers=None, connected=None) -> list[Received]:
    """The first `until` events of the folder's stream (it never ends by itself)."""
    received: list[Received] = []
    with httpx.stream(
        "GET",
        f"{server.url}/api/folders/{folder_id}/events",
        timeout=20,
        headers={"Authorization": f"Token {token}", **(headers or {})},
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        if connected is not None:
            connected.set()
        for item in parse_sse(response.iter_lines()):
            if item.type != "comment":
                received.append(item)
            if len(received) == until:
                return received
    return received


def test_a_connected_client_sees_each_file_indexed_and_the_counters_reach_the_total(asgi_server, folder, root, user):
    write(root, "a.md", "# Lease\n\nThe lease renews on the first of March.")
    write(root, "b.txt", "Invoice INV-4411 is due in thirty days.")
    token = api_token(user)
    connected = threading.Event()

    with ThreadPoolExecutor(1) as pool:
        # `indexing` as the run starts, per file a `file_started` and a `file` event, and the listing's `scan`
        future = pool.submit(read_events, asgi_server, folder.pk, token=token, until=6, connected=connected)
        assert connected.wait(10)
        folder_index(folder_id=folder.pk, inline=True)
        received = future.result(timeout=30)

    assert sorted(item.type for item in received) == [
        "file",
        "file",
        "file_started",
        "file_started",
        "indexing",
        "scan",
    ]
    started = [item.data["path"] for item in received if item.type == "file_started"]
    assert sorted(started) == ["a.md", "b.txt"]
    files = [item.data for item in received if item.type == "file"]
    assert {data["path"] for data in files} == {"a.md", "b.txt"}
    assert all(data["status"] == "indexed" for data in files)
    assert max(data["files_done"] for data in files) == files[-1]["files_total"] == 2


def test_reconnecting_with_last_event_id_replays_only_what_was_missed(asgi_server, folder, root, user):
    write(root, "a.md", "Notes about the garden.")
    write(root, "b.md", "Notes about the kitchen.")
    folder_index(folder_id=folder.pk, inline=True)
    logged = events_after(channel=folder_channel(folder.pk))
    token = api_token(user)

    rest = read_events(
        asgi_server, folder.pk, token=token, until=len(logged) - 1, headers={"Last-Event-ID": logged[0].id}
    )

    assert [(item.id, item.type, item.data) for item in rest] == [(e.id, e.type, e.data) for e in logged[1:]]


def test_another_users_folder_stream_is_404_and_anonymous_is_401(asgi_server, folder, other_user):
    token = api_token(other_user)
    url = f"{asgi_server.url}/api/folders/{folder.pk}/events"

    assert httpx.get(url, headers={"Authorization": f"Token {token}"}, timeout=10).status_code == 404
    assert httpx.get(url, timeout=10).status_code == 401
    malformed = httpx.get(url, headers={"Authorization": f"Token {token}", "Last-Event-ID": "nope"}, timeout=10)
    assert malformed.status_code == 400


def test_a_sync_publishes_its_result_on_the_folder_stream(folder, root):
    write(root, "a.md", "Notes about the garden.")
    folder_index(folder_id=folder.pk, inline=True)
    write(root, "b.md", "Notes about the kitchen.")
    write(root, "a.md", "Notes about the garden and the shed.")

    log = folder_sync(folder_id=folder.pk)

    synced = [event.data for event in events_after(channel=folder_channel(folder.pk)) if event.type == "sync"]
    assert log is not None and len(synced) == 1
    assert (synced[0]["added"], synced[0]["modified"], synced[0]["deleted"]) == (1, 1, 0)
    assert synced[0]["summary"] == "+1 ~1 -0" and synced[0]["sync_log_id"] == log.pk

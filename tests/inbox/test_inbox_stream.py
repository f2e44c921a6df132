"""GET /api/inbox/events: every organizable folder's inbox events in one stream, through a real
ASGI server and Redis (the events are published on the folders' channels, as the services do)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from apps.core.events import events_after, folder_channel, inbox_channel, publish_event
from apps.library.models import Folder, FolderMembership, FolderRole
from tests.support.sse_client import Received, parse_sse
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db(transaction=True)


def folder_of(owner, name: str) -> Folder:
    return Folder.objects.create(owner=owner, source="local", external_id=f"/nowhere/{name}", name=name)


def suggestion_event(folder: Folder, n: int) -> str:
    return publish_event(
        channel=folder_channel(folder.pk), type="suggestion", data={"suggestion_id": n, "filePath": f"inbox/{n}.pdf"}
    )


def read(server, user, *, until: int, headers=None, connected=None, first=None) -> list[Received]:
    token = api_token(user)
    received: list[Received] = []
    headers = {"Authorization": f"Token {token}", **(headers or {})}
    with httpx.stream("GET", f"{server.url}/api/inbox/events", timeout=20, headers=headers) as response:
        assert response.status_code == 200, response.read()
        if connected is not None:
            connected.set()
        for item in parse_sse(response.iter_lines()):
            if item.type != "comment":
                received.append(item)
                if first is not None:
                    first.set()
            if len(received) == until:
                break
    return received


def test_every_folder_arrives_on_one_stream_and_a_reconnect_replays_only_what_was_missed(asgi_server, user) -> None:
    folders = [folder_of(user, f"f{n}") for n in range(6)]
    for n, folder in enumerate(folders):
        suggestion_event(folder, n)
    publish_event(channel=folder_channel(folders[0].pk), type="scan", data={"folder_id": folders[0].pk})  # not inbox's

    received = read(asgi_server, user, until=6)

    assert [item.type for item in received] == ["suggestion"] * 6
    assert [item.data["folder_id"] for item in received] == [folder.pk for folder in folders]
    assert [item.data["suggestion_id"] for item in received] == list(range(6))
    rest = read(asgi_server, user, until=2, headers={"Last-Event-ID": received[3].id})
    assert [item.data["suggestion_id"] for item in rest] == [4, 5]
    assert [item.id for item in rest] == [item.id for item in received[4:]]


def test_nothing_to_follow_is_404_and_nobody_sees_anothers_folders(asgi_server, user, other_user) -> None:
    token = api_token(other_user)
    response = httpx.get(f"{asgi_server.url}/api/inbox/events", headers={"Authorization": f"Token {token}"})
    assert response.status_code == 404
    assert response.json()["detail"] == "You have no folder whose inbox you can organize."
    assert httpx.get(f"{asgi_server.url}/api/inbox/events").status_code == 401

    theirs, mine = folder_of(other_user, "theirs"), folder_of(user, "mine")
    suggestion_event(theirs, 1)
    suggestion_event(mine, 2)

    assert [item.data["suggestion_id"] for item in read(asgi_server, user, until=1)] == [2]
    assert events_after(channel=inbox_channel(user.pk))[0].data["folder_id"] == mine.pk
    assert len(events_after(channel=inbox_channel(user.pk))) == 1
    assert len(events_after(channel=inbox_channel(other_user.pk))) == 1


def test_a_viewer_gets_nothing_and_a_revoked_editor_stops_receiving(asgi_server, user, other_user) -> None:
    shared, own = folder_of(user, "shared"), folder_of(other_user, "own")
    membership = FolderMembership.objects.create(folder=shared, user=other_user, role=FolderRole.EDITOR)
    connected, first = threading.Event(), threading.Event()

    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(read, asgi_server, other_user, until=2, connected=connected, first=first)
        assert connected.wait(10)
        suggestion_event(shared, 1)
        # Each event is checked against the role when it is sent: revoke only once the first is out.
        assert first.wait(10)
        membership.delete()  # revoked while the stream is open
        suggestion_event(shared, 2)
        suggestion_event(own, 3)
        received = future.result(timeout=30)

    assert [item.data["suggestion_id"] for item in received] == [1, 3]
    # Replayed later, the folder it lost is gone from the log it reads, the event it saw included.
    assert [item.data["suggestion_id"] for item in read(asgi_server, other_user, until=1)] == [3]

    FolderMembership.objects.create(folder=shared, user=other_user, role=FolderRole.VIEWER)
    suggestion_event(shared, 4)  # a viewer does not organize: not copied to them
    assert [event.data["suggestion_id"] for event in events_after(channel=inbox_channel(other_user.pk))] == [1, 3]

"""Event streams through a real ASGI server with `Authorization: Bearer`: a folder's stream needs
`read`, a run's `chat`, and a folder-limited token reaches no other folder's stream."""

from __future__ import annotations

import httpx
import pytest
from django.utils import timezone

from apps.chat.models import AgentRun, Conversation, Message, RunStatus
from apps.core.events import folder_channel, publish_event, run_channel
from apps.library.models import Folder
from tests.support.sse_client import parse_sse
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db(transaction=True)


def _folder(user, tmp_path, name: str) -> Folder:
    (tmp_path / name).mkdir()
    return Folder.objects.create(owner=user, source="local", external_id=str(tmp_path / name), name=name)


def _first_event(url: str, secret: str) -> tuple[int, object]:
    """The status, and the first event's type and data (or the error body)."""
    headers = {"Authorization": f"Bearer {secret}"}
    with httpx.stream("GET", url, params={"last_event_id": "0"}, headers=headers, timeout=15) as response:
        if response.status_code != 200:
            return response.status_code, response.read().decode()
        received = next(item for item in parse_sse(response.iter_lines()) if item.type != "comment")
        return 200, (received.type, received.data)


def test_a_folder_stream_needs_read_and_honours_the_folder_limit(asgi_server, user, tmp_path):
    folder, other = _folder(user, tmp_path, "docs"), _folder(user, tmp_path, "other")
    publish_event(channel=folder_channel(folder.pk), type="scan", data={"added": 3})
    url = f"{asgi_server.url}/api/folders/{folder.pk}/events"

    assert _first_event(url, api_token(user, scopes=["read"])) == (200, ("scan", {"added": 3}))
    status, body = _first_event(url, api_token(user, scopes=["search", "chat", "manage"]))
    assert status == 403 and "'read' scope" in str(body)
    assert _first_event(url, api_token(user, scopes=["read"], folder_ids=[other.pk]))[0] == 404
    assert _first_event(url, "fc_unknown")[0] == 401


def test_a_run_stream_needs_chat(asgi_server, user, tmp_path):
    folder = _folder(user, tmp_path, "docs")
    conversation = Conversation.objects.create(owner=user, folder=folder, kind="chat", title="c")
    question = Message.objects.create(conversation=conversation, role="user", content={"text": "hi"})
    run = AgentRun.objects.create(
        owner=user, conversation=conversation, question=question, status=RunStatus.COMPLETED, finished_at=timezone.now()
    )
    publish_event(channel=run_channel(run.pk), type="done", data={"status": "completed"})
    url = f"{asgi_server.url}/api/runs/{run.pk}/events"

    assert _first_event(url, api_token(user, scopes=["chat"])) == (200, ("done", {"status": "completed"}))
    status, body = _first_event(url, api_token(user, scopes=["read", "search", "manage"]))
    assert status == 403 and "'chat' scope" in str(body)

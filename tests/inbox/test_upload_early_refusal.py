"""POST /api/inbox/files refuses before reading: the folder is checked before the body is parsed
(a stranger 404, a viewer 403, the CSRF check included), an over-the-cap file stops streaming at
the cap, and a chunked body with no Content-Length is cut off at the server's edge."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.middleware.csrf import get_token
from django.test import Client, RequestFactory

from apps.inbox.upload_apis import InboxUploadParser
from apps.library.models import Folder, FolderMembership

pytestmark = pytest.mark.django_db

CHUNK = 64 * 1024


@pytest.fixture
def home(tmp_path: Path, user) -> Folder:
    (tmp_path / "inbox").mkdir()
    return Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="Home")


@pytest.fixture
def parsed(monkeypatch) -> list[str]:
    """Every time the upload's body is parsed: these requests must never get that far."""
    calls: list[str] = []
    monkeypatch.setattr(InboxUploadParser, "parse", lambda *args, **kwargs: calls.append("parsed") or 1 / 0)
    return calls


def file_form(folder: Folder) -> dict:
    return {"folder_id": folder.pk, "file": SimpleUploadedFile("w2.txt", b"W2 wages " * 1000)}


def test_a_stranger_gets_404_and_a_viewer_403_before_the_body_is_parsed(other_client, other_user, home, parsed):
    url = f"/api/inbox/files?folder_id={home.pk}"
    assert other_client.post(url, file_form(home), format="multipart").status_code == 404
    FolderMembership.objects.create(folder=home, user=other_user, role="viewer")
    assert other_client.post(url, file_form(home), format="multipart").status_code == 403
    assert parsed == []


def test_the_session_csrf_check_does_not_parse_the_body_either(other_user, home, parsed):
    """The web page's way: a session and the token in the X-CSRFToken header, never in the form."""
    FolderMembership.objects.create(folder=home, user=other_user, role="viewer")
    client = Client(enforce_csrf_checks=True)
    client.force_login(other_user)
    token = get_token(RequestFactory().get("/"))
    client.cookies["csrftoken"] = token
    url = f"/api/inbox/files?folder_id={home.pk}"
    assert client.post(url, file_form(home), HTTP_X_CSRFTOKEN=token).status_code == 403
    assert client.post(url, file_form(home)).status_code == 403  # no token: refused by CSRF
    assert parsed == []


def test_a_file_over_the_cap_stops_streaming_at_the_cap(auth_client, home, settings, monkeypatch):
    settings.INBOX_UPLOAD_MAX_BYTES = 100_000
    spooled: list[int] = []
    real = TemporaryFileUploadHandler.receive_data_chunk

    def receive(self, raw_data, start):
        spooled.append(len(raw_data))
        return real(self, raw_data, start)

    monkeypatch.setattr(TemporaryFileUploadHandler, "receive_data_chunk", receive)
    monkeypatch.setattr(settings, "FILE_UPLOAD_MAX_MEMORY_SIZE", 0)
    data = {"folder_id": home.pk, "file": SimpleUploadedFile("big.txt", b"a" * 150_000)}
    response = auth_client.post(f"/api/inbox/files?folder_id={home.pk}", data, format="multipart")
    assert response.status_code == 413
    assert sum(spooled) <= settings.INBOX_UPLOAD_MAX_BYTES


def test_a_chunked_body_with_no_length_is_cut_off_once_past_the_cap(settings):
    from config.asgi import application

    settings.INBOX_UPLOAD_MAX_BYTES = 2_000_000
    settings.CHAT_IMAGE_MAX_BYTES = 400_000  # a question's images, together, stay under the upload's cap
    read: list[int] = []
    sent: list[dict] = []

    async def receive() -> dict:
        # 100 chunks (6.4 MB, three times the cap): a bound only so that a failing server still ends.
        read.append(CHUNK)
        return {"type": "http.request", "body": b"x" * CHUNK, "more_body": len(read) < 100}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/inbox/files",
        "raw_path": b"/api/inbox/files",
        "query_string": b"folder_id=1",
        "headers": [(b"host", b"testserver"), (b"transfer-encoding", b"chunked")],
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
    }
    asyncio.run(asyncio.wait_for(application(scope, receive, send), timeout=30))
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 413
    assert b"INBOX_UPLOAD_MAX_BYTES" in b"".join(message.get("body", b"") for message in sent[1:])
    assert sum(read) <= settings.INBOX_UPLOAD_MAX_BYTES + 64 * 1024 + CHUNK

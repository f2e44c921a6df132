"""The content endpoint's bounds on a Drive file: bytes streamed from Drive piece by piece, a range
fetched as a range, whole downloads capped (413 with Drive's link), a per-user rate shared by every
process (429) and a per-process bound on downloads in flight (503)."""

from __future__ import annotations

import os

import pytest
from django.core.cache import cache
from rest_framework.throttling import ScopedRateThrottle

from apps.library.models import Folder
from emulators.drive.state import DriveState, MediaServed
from tests.support.drive_content import drive_file
from tests.support.originals import body

pytestmark = pytest.mark.django_db

SIZE = 50_000


@pytest.fixture
def content() -> bytes:
    return os.urandom(SIZE)


def test_a_range_fetches_only_that_range_from_drive(folder: Folder, auth_client, state: DriveState, content) -> None:
    file = drive_file(state, folder=folder, name="big.pdf", content=content)
    response = auth_client.get(f"/api/files/{file.pk}/content", HTTP_RANGE="bytes=1000-1999")
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes 1000-1999/{SIZE}"
    assert body(response) == content[1000:2000]
    assert state.media_served == [MediaServed(file_id=file.external_id, range="bytes=1000-1999", length=1000)]


def test_a_whole_download_streams_piece_by_piece(
    folder: Folder, auth_client, state: DriveState, content, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("apps.connectors.drive.api.STREAM_PIECE_BYTES", 20_000, raising=False)
    file = drive_file(state, folder=folder, name="big.pdf", content=content)
    response = auth_client.get(f"/api/files/{file.pk}/content")
    assert response.status_code == 200
    assert response.streaming and response["Content-Length"] == str(SIZE)
    # Nothing is fetched before the first byte is asked for, and then only its piece.
    assert state.media_served == []
    pieces = iter(response.streaming_content)
    first = next(pieces)
    assert content.startswith(first)
    assert [served.length for served in state.media_served] == [20_000]
    assert first + b"".join(pieces) == content
    assert [served.range for served in state.media_served] == [
        "bytes=0-19999",
        "bytes=20000-39999",
        "bytes=40000-49999",
    ]


def test_a_file_past_the_cap_is_413_with_its_drive_link_but_ranges_are_served(
    folder: Folder, auth_client, state: DriveState, content, settings
) -> None:
    settings.CONTENT_MAX_BYTES = 10_000
    file = drive_file(state, folder=folder, name="big.pdf", content=content)
    link = file.source_extra["web_view_link"]
    whole = auth_client.get(f"/api/files/{file.pk}/content")
    assert whole.status_code == 413
    assert whole.json()["link"] == link and link in whole.json()["detail"]
    assert state.media_served == []
    # A viewer's ranges still work; one asking for everything gets the cap's worth, as Content-Range says.
    assert body(auth_client.get(f"/api/files/{file.pk}/content", HTTP_RANGE="bytes=100-199")) == content[100:200]
    open_ended = auth_client.get(f"/api/files/{file.pk}/content", HTTP_RANGE="bytes=0-")
    assert open_ended.status_code == 206
    assert open_ended["Content-Range"] == f"bytes 0-9999/{SIZE}"
    assert body(open_ended) == content[:10_000]
    assert sum(served.length for served in state.media_served) == 10_100


def test_past_the_rate_is_429_with_retry_after_even_from_another_process(
    folder: Folder, auth_client, state: DriveState, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = drive_file(state, folder=folder, name="small.pdf", content=b"%PDF-1.4 small")
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {**ScopedRateThrottle.THROTTLE_RATES, "content": "2/min"})
    url = f"/api/files/{file.pk}/content"
    for _ in range(2):
        assert body(auth_client.get(url)) == b"%PDF-1.4 small"
    # This process's memory forgotten: the count lives where every web process sees it.
    cache.clear()
    refused = auth_client.get(url)
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 60


def test_downloads_past_the_process_bound_are_503_with_retry_after(
    folder: Folder, auth_client, state: DriveState, content, settings
) -> None:
    settings.CONTENT_MAX_CONCURRENT = 1
    file = drive_file(state, folder=folder, name="big.pdf", content=content)
    url = f"/api/files/{file.pk}/content"
    first = auth_client.get(url)
    assert first.status_code == 200
    busy = auth_client.get(url, HTTP_RANGE="bytes=0-99")
    assert busy.status_code == 503
    assert int(busy["Retry-After"]) >= 1
    assert body(first) == content  # read to its end, the response frees its slot
    assert auth_client.get(url, HTTP_RANGE="bytes=0-99").status_code == 206

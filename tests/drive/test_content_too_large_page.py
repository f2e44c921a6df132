"""A Drive file past `CONTENT_MAX_BYTES` for a person: a browser showing the content endpoint's 413
itself (a tab, the document page's frame) gets a page linking to Drive while scripts and API
clients keep the JSON; the document page says so in place of its viewer before anything is asked."""

from __future__ import annotations

import os

import pytest
from django.template.defaultfilters import filesizeformat

from apps.library.models import Folder
from emulators.drive.state import DriveState
from tests.support.drive_content import drive_file

pytestmark = pytest.mark.django_db

SIZE = 50_000
CAP = 10_000
# What Chromium sends for a navigation (a tab, a frame); a script's fetch() sends `*/*` unless told.
BROWSER_ACCEPT = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,"
    "application/signed-exchange;v=b3;q=0.7"
)
FRAME = {"HTTP_SEC_FETCH_DEST": "iframe", "HTTP_SEC_FETCH_MODE": "navigate", "HTTP_ACCEPT": BROWSER_ACCEPT}
# What a person reads of the sizes, whatever spaces (a template's line breaks, filesizeformat's nbsp).
SIZES = f"is {filesizeformat(SIZE)}; files from Google Drive larger than {filesizeformat(CAP)} are not shown here."


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def big_pdf(folder: Folder, state: DriveState, settings):
    settings.CONTENT_MAX_BYTES = CAP
    return drive_file(state, folder=folder, name="scan.pdf", content=os.urandom(SIZE))


@pytest.mark.parametrize(
    "headers",
    [
        FRAME,
        {"HTTP_SEC_FETCH_DEST": "document", "HTTP_SEC_FETCH_MODE": "navigate", "HTTP_ACCEPT": BROWSER_ACCEPT},
        {"HTTP_SEC_FETCH_DEST": "embed", "HTTP_ACCEPT": "*/*"},
        # A browser without Fetch metadata: its Accept prefers HTML.
        {"HTTP_ACCEPT": BROWSER_ACCEPT},
    ],
    ids=["frame", "tab", "embed", "accept-only"],
)
def test_a_browser_showing_the_413_itself_gets_a_page_linking_to_drive(
    big_pdf, auth_client, state: DriveState, headers: dict[str, str]
) -> None:
    link = big_pdf.source_extra["web_view_link"]
    response = auth_client.get(f"/api/files/{big_pdf.pk}/content", **headers)
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "Too large to show here" in html
    assert words(SIZES) in words(html)
    assert f'<a class="button primary" href="{link}" target="_blank" rel="noopener noreferrer">' in html
    assert '"detail"' not in html
    # Framed by the document page only, the site's stylesheet and no script; never cached for the JSON.
    policy = response["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "frame-ancestors 'self'" in policy and "script-src" not in policy
    assert {"Accept", "Sec-Fetch-Dest"} <= {value.strip() for value in response["Vary"].split(",")}
    assert state.media_served == []


@pytest.mark.parametrize(
    "headers",
    [
        # fetch() or XHR, even one asking for HTML: a script reads the answer, never a person.
        {"HTTP_SEC_FETCH_DEST": "empty", "HTTP_SEC_FETCH_MODE": "cors", "HTTP_ACCEPT": BROWSER_ACCEPT},
        {"HTTP_SEC_FETCH_DEST": "image", "HTTP_ACCEPT": "image/avif,image/webp,*/*;q=0.8"},
        {"HTTP_ACCEPT": "application/json"},
        {"HTTP_ACCEPT": "*/*"},
        {},
    ],
    ids=["fetch", "image", "json", "anything", "no-accept"],
)
def test_scripts_and_api_clients_keep_the_json_the_frame_does_not_get(
    big_pdf, auth_client, headers: dict[str, str]
) -> None:
    url = f"/api/files/{big_pdf.pk}/content"
    assert auth_client.get(url, **FRAME)["Content-Type"].startswith("text/html")
    response = auth_client.get(url, **headers)
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json()["link"] == big_pdf.source_extra["web_view_link"]


def test_the_document_page_offers_drive_in_place_of_a_viewer_past_the_cap(
    big_pdf, folder: Folder, state: DriveState, web_client
) -> None:
    link = big_pdf.source_extra["web_view_link"]
    html = web_client.get(f"/files/{big_pdf.pk}").content.decode()
    assert 'id="pdf-view"' not in html
    assert "Too large to show here" in html
    assert words(SIZES) in words(html)
    assert f'<a class="button primary" href="{link}" target="_blank" rel="noopener noreferrer">' in html
    assert "Download original" not in html  # the endpoint would refuse it whole too
    photo = drive_file(state, folder=folder, name="photo.png", content=os.urandom(SIZE), mime_type="image/png")
    html = web_client.get(f"/files/{photo.pk}").content.decode()
    assert 'id="image-view"' not in html and "Too large to show here" in html
    small = drive_file(state, folder=folder, name="small.pdf", content=b"%PDF-1.4 small")
    html = web_client.get(f"/files/{small.pk}").content.decode()
    assert 'id="pdf-view"' in html and "Download original" in html
    assert "Too large to show here" not in html

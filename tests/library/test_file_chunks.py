"""GET /api/files/{id}/chunks and the document page /files/{id}: the text in order with its
locations, paged; nothing of it for another user or anyone signed out."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.library.models import FolderMembership
from tests.support.originals import add_chunks, file_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def long_file(folder):
    file = file_row(folder=folder, path="book.epub", mime_type="application/epub+zip")
    add_chunks(
        file=file,
        chunks=[
            (f"Paragraph {index}.", {"chapter": index // 10 + 1, "heading": ["Part", f"H{index}"]})
            for index in range(120)
        ],
    )
    return file


def test_chunks_come_in_document_order_a_page_at_a_time_with_their_locations(auth_client, long_file):
    first = auth_client.get(f"/api/files/{long_file.pk}/chunks").json()
    assert first["count"] == 120
    assert [chunk["chunk_index"] for chunk in first["results"]] == list(range(50))
    assert first["results"][12]["location"] == {"chapter": 2, "heading": ["Part", "H12"]}
    assert first["results"][12]["location_label"] == "chapter 2, Part > H12"
    third = auth_client.get(f"/api/files/{long_file.pk}/chunks", {"page": 3}).json()
    assert [chunk["text"] for chunk in third["results"]] == [f"Paragraph {index}." for index in range(100, 120)]
    assert third["next"] is None
    small = auth_client.get(f"/api/files/{long_file.pk}/chunks", {"page": 2, "page_size": 7}).json()
    assert [chunk["chunk_index"] for chunk in small["results"]] == list(range(7, 14))


def test_a_page_past_the_end_is_a_404_saying_so(auth_client, long_file):
    response = auth_client.get(f"/api/files/{long_file.pk}/chunks", {"page": 9})
    assert response.status_code == 404
    assert response.json()["detail"]


def test_chunks_are_404_for_another_user_401_signed_out_and_readable_by_a_viewer(
    api_client, other_client, other_user, long_file, folder
):
    url = f"/api/files/{long_file.pk}/chunks"
    assert other_client.get(url).status_code == 404
    assert api_client.get(url).status_code == 401
    FolderMembership.objects.create(folder=folder, user=other_user, role="viewer")
    assert other_client.get(url).json()["count"] == 120


def _page(client: Client, url: str):
    response = client.get(url)
    return response, response.content.decode()


def test_the_page_opens_at_the_page_of_chunks_holding_the_cited_one(client, user, long_file):
    client.force_login(user)
    cited = long_file.chunks.get(chunk_index=75)
    response, html = _page(client, f"/files/{long_file.pk}?chunk={cited.pk}")
    assert response.status_code == 200
    assert f'data-chunk-id="{cited.pk}"' in html
    assert 'data-page="2"' in html
    assert "Download original" in html
    assert f'href="/api/files/{long_file.pk}/content"' in html


def test_a_chunk_of_another_file_or_no_number_marks_nothing(client, user, folder, long_file):
    client.force_login(user)
    other = file_row(folder=folder, path="other.txt")
    (foreign,) = add_chunks(file=other, chunks=[("elsewhere", {})])
    for chunk in (str(foreign.pk), "abc", "9" * 40, ""):
        response, html = _page(client, f"/files/{long_file.pk}?chunk={chunk}")
        assert response.status_code == 200, chunk
        assert 'data-chunk-id=""' in html and 'data-page="1"' in html


def test_a_pdf_is_framed_at_the_cited_page_and_a_drive_file_links_to_drive(client, user, folder):
    client.force_login(user)
    pdf = file_row(folder=folder, path="report.pdf", mime_type="application/pdf")
    pdf.source_extra = {"web_view_link": "https://drive.google.com/file/d/abc/view?usp=drivesdk"}
    pdf.save(update_fields=["source_extra"])
    (_, cited) = add_chunks(file=pdf, chunks=[("intro", {"page": 1}), ("results", {"page": 4})])
    _, html = _page(client, f"/files/{pdf.pk}?chunk={cited.pk}")
    assert f'src="/api/files/{pdf.pk}/content#page=4"' in html
    assert 'href="https://drive.google.com/file/d/abc/view?usp=drivesdk"' in html
    assert "Open in Google Drive" in html


def test_a_tampered_drive_link_is_not_shown(client, user, folder):
    client.force_login(user)
    file = file_row(folder=folder, path="x.txt")
    file.source_extra = {"web_view_link": "javascript:alert(1)"}
    file.save(update_fields=["source_extra"])
    _, html = _page(client, f"/files/{file.pk}")
    assert "javascript:" not in html and "Open in Google Drive" not in html


def test_the_page_is_404_for_another_user_and_a_login_redirect_signed_out(client, user, other_user, long_file):
    url = f"/files/{long_file.pk}"
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/login/?next=/files/")
    client.force_login(other_user)
    assert client.get(url).status_code == 404
    assert client.get("/files/999999999").status_code == 404

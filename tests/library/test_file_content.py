"""GET /api/files/{id}/content: a local file's original bytes, its headers, byte ranges, and the
paths it refuses (outside the folder by `..`, an absolute path or a symlink)."""

from __future__ import annotations

import os

import pytest

from apps.library.models import FolderMembership
from tests.support.documents import pdf_bytes
from tests.support.files import write
from tests.support.originals import body, file_row

pytestmark = pytest.mark.django_db

TEXT = b"0123456789abcdefghijklmnopqrstuvwxyz"


def content_url(file) -> str:
    return f"/api/files/{file.pk}/content"


@pytest.fixture
def text_file(root, folder):
    write(root, "notes/alphabet.txt", TEXT)
    return file_row(folder=folder, path="notes/alphabet.txt", size=len(TEXT))


def test_a_text_file_is_served_whole_as_an_attachment_that_cannot_run_script(auth_client, text_file):
    response = auth_client.get(content_url(text_file))
    assert response.status_code == 200
    assert body(response) == TEXT
    assert response["Content-Type"] == "text/plain"
    assert response["Content-Length"] == str(len(TEXT))
    assert response["Content-Disposition"] == 'attachment; filename="alphabet.txt"'
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"].startswith("sandbox")
    assert response["Accept-Ranges"] == "bytes"


def test_pdfs_and_images_are_inline_and_html_and_svg_sandboxed(auth_client, root, folder):
    cases = {
        "report.pdf": ("application/pdf", pdf_bytes(["Page one"]), "inline"),
        "scan.png": ("image/png", b"\x89PNG\r\n\x1a\n", "inline"),
        "drawing.svg": ("image/svg+xml", b"<svg xmlns='http://www.w3.org/2000/svg'><script>1</script></svg>", "inline"),
        "page.html": ("text/html", b"<script>alert(1)</script>", "attachment"),
    }
    for name, (mime_type, content, disposition) in cases.items():
        write(root, name, content)
        response = auth_client.get(content_url(file_row(folder=folder, path=name, mime_type=mime_type)))
        assert response.status_code == 200, name
        assert body(response) == content
        assert response["Content-Type"] == mime_type
        assert response["Content-Disposition"] == f'{disposition}; filename="{name}"'
        assert response["X-Content-Type-Options"] == "nosniff"
        policy = response["Content-Security-Policy"]
        # Chrome's PDF viewer cannot run in a sandboxed document; everything else is sandboxed.
        assert policy.startswith("sandbox") is (mime_type != "application/pdf"), (name, policy)


@pytest.mark.parametrize(
    ("header", "expected", "content_range"),
    [
        ("bytes=0-9", TEXT[:10], "bytes 0-9/36"),
        ("bytes=30-", TEXT[30:], "bytes 30-35/36"),
        ("bytes=-4", TEXT[-4:], "bytes 32-35/36"),
        ("bytes=10-1000", TEXT[10:], "bytes 10-35/36"),
    ],
)
def test_a_single_range_is_a_206_with_its_bytes(auth_client, text_file, header, expected, content_range):
    response = auth_client.get(content_url(text_file), HTTP_RANGE=header)
    assert response.status_code == 206
    assert body(response) == expected
    assert response["Content-Range"] == content_range
    assert response["Content-Length"] == str(len(expected))
    assert response["X-Content-Type-Options"] == "nosniff"


def test_an_unsatisfiable_range_is_a_416_saying_the_size(auth_client, text_file):
    response = auth_client.get(content_url(text_file), HTTP_RANGE="bytes=36-")
    assert response.status_code == 416
    assert response["Content-Range"] == "bytes */36"
    assert "36 bytes" in response.json()["detail"]


@pytest.mark.parametrize("header", ["bytes=0-1,4-5", "bytes=9-2", "lines=1-2", "nonsense"])
def test_a_range_it_does_not_serve_gets_the_whole_file(auth_client, text_file, header):
    response = auth_client.get(content_url(text_file), HTTP_RANGE=header)
    assert response.status_code == 200
    assert body(response) == TEXT


def test_paths_leading_outside_the_folder_are_refused(auth_client, root, folder, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"the secret next door")
    os.symlink(secret, root / "link.txt")
    for path in ("../secret.txt", str(secret), "link.txt", "notes/../../secret.txt"):
        response = auth_client.get(content_url(file_row(folder=folder, path=path)))
        assert response.status_code == 403, (path, response.status_code)
        assert b"secret next door" not in body(response)
        assert "Refused" in response.json()["detail"]


def test_a_symlink_inside_the_folder_is_served_from_its_target(auth_client, root, folder):
    write(root, "real/target.txt", b"inside")
    os.symlink(root / "real" / "target.txt", root / "alias.txt")
    response = auth_client.get(content_url(file_row(folder=folder, path="alias.txt")))
    assert response.status_code == 200
    assert body(response) == b"inside"


def test_a_fifo_is_refused_without_hanging(auth_client, root, folder):
    os.mkfifo(root / "pipe.txt")
    response = auth_client.get(content_url(file_row(folder=folder, path="pipe.txt")))
    assert response.status_code == 403
    assert "not a regular file" in response.json()["detail"]


def test_a_file_gone_from_disk_is_a_404_saying_so(auth_client, folder):
    response = auth_client.get(content_url(file_row(folder=folder, path="vanished.txt")))
    assert response.status_code == 404
    assert "no longer in its folder" in response.json()["detail"]


def test_another_user_gets_404_a_viewer_the_bytes_and_anonymous_401(
    api_client, other_client, other_user, text_file, folder
):
    assert other_client.get(content_url(text_file)).status_code == 404
    assert api_client.get(content_url(text_file)).status_code == 401
    FolderMembership.objects.create(folder=folder, user=other_user, role="viewer")
    response = other_client.get(content_url(text_file))
    assert response.status_code == 200
    assert body(response) == TEXT


def test_a_viewer_asking_for_a_pdf_by_accept_is_not_refused(auth_client, root, folder):
    write(root, "a.pdf", pdf_bytes(["x"]))
    file = file_row(folder=folder, path="a.pdf", mime_type="application/pdf")
    response = auth_client.get(content_url(file), HTTP_ACCEPT="application/pdf")
    assert response.status_code == 200
    assert body(response).startswith(b"%PDF-")

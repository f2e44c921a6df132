"""POST /api/inbox/files: checked before anything is written, saved without overwriting, indexed at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.library.indexing import files_index
from apps.library.models import File, FileStatus, Folder, FolderMembership
from tests.support.office_documents import xlsx_bytes, zip_bomb_bytes

pytestmark = pytest.mark.django_db

W2 = b"Form W-2 Wage and Tax Statement 2024. Box 2 federal income tax withheld: 12,300 dollars.\n"
# The first bytes of /bin/ls: a 64-bit ELF header.
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00\x3e\x00\x01\x00\x00\x00" + b"\x00" * 200


@pytest.fixture
def home(tmp_path: Path, user) -> Folder:
    (tmp_path / "inbox").mkdir()
    (tmp_path / "inbox" / "w2.txt").write_bytes(b"the first W2, kept as it is\n")
    return Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="Home")


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """File id groups sent to index_files (the upload does not wait for a sync)."""
    sent: list[list[int]] = []
    monkeypatch.setattr("apps.library.enqueue.index_files", lambda file_ids, task_id, **options: sent.append(file_ids))
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", lambda file_id: None)
    return sent


def upload(client, folder: Folder, name: str, data: bytes, content_type: str = "application/octet-stream"):
    return client.post(
        "/api/inbox/files",
        {"folder_id": folder.pk, "file": SimpleUploadedFile(name, data, content_type=content_type)},
        format="multipart",
    )


def inbox_names(folder: Folder) -> list[str]:
    return sorted(path.name for path in (Path(folder.external_id) / "inbox").iterdir())


def test_an_upload_is_saved_indexed_at_once_and_a_taken_name_gets_a_number(
    auth_client, home, queued, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(auth_client, home, "w2.txt", W2, content_type="application/pdf")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body | {"file_id": None} == {
        "path": "inbox/w2 (2).txt",
        "name": "w2 (2).txt",
        "renamed": True,
        "mime_type": "text/plain",  # read from the content, not from the type the browser claimed
        "size": len(W2),
        "file_id": None,
    }
    root = Path(home.external_id)
    assert (root / "inbox" / "w2.txt").read_bytes() == b"the first W2, kept as it is\n"
    assert (root / "inbox" / "w2 (2).txt").read_bytes() == W2
    assert inbox_names(home) == ["w2 (2).txt", "w2.txt"]  # no temporary file left behind
    file = File.objects.get(pk=body["file_id"])
    assert (file.path, file.status) == ("inbox/w2 (2).txt", FileStatus.PENDING)
    assert queued == [[file.pk]]

    files_index(file_ids=[file.pk])
    assert File.objects.get(pk=file.pk).status == FileStatus.INDEXED


def test_an_office_file_is_typed_by_its_content(auth_client, home, queued, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(auth_client, home, "Budget.xlsx", xlsx_bytes())

    assert response.status_code == 201, response.json()
    assert response.json()["mime_type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert len(queued) == 1


@pytest.mark.parametrize(
    ("name", "data", "status", "words"),
    [
        ("statement.pdf", ELF, 415, "executable program"),
        ("report.docx", zip_bomb_bytes(member="word/document.xml", size=5_000_000), 415, "zip bomb"),
        ("archive.pdf", zip_bomb_bytes(member="data.bin", size=2_000_000), 415, "zip archive"),
        ("notes.pdf", b"just some words", 415, "plain text, but its name says application/pdf"),
        ("blob.txt", b"\x00\x01\x02binary", 415, "binary data"),
        ("empty.txt", b"", 400, "empty"),
        (".bashrc", b"export A=1", 400, "hidden files"),
    ],
)
def test_a_bad_upload_is_refused_and_writes_nothing(
    auth_client, home, queued, name: str, data: bytes, status: int, words: str
) -> None:
    response = upload(auth_client, home, name, data)

    assert response.status_code == status, response.content
    assert words in response.content.decode()
    assert inbox_names(home) == ["w2.txt"]
    assert not File.objects.filter(folder=home).exists() and queued == []


@pytest.mark.parametrize("name", ["../escape.txt", "..\\escape.txt", "inbox/../../escape.txt"])
def test_a_name_with_a_path_is_refused_not_cut_down(auth_client, home, queued, name: str) -> None:
    # Written by hand: test clients send only a file's base name.
    body = (
        (
            f'--B\r\nContent-Disposition: form-data; name="folder_id"\r\n\r\n{home.pk}\r\n'
            f'--B\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: text/plain\r\n\r\n"
        ).encode()
        + W2
        + b"\r\n--B--\r\n"
    )

    response = auth_client.generic("POST", "/api/inbox/files", body, content_type="multipart/form-data; boundary=B")

    assert response.status_code == 400, response.content
    assert "not a plain file name" in response.json()["detail"]
    assert inbox_names(home) == ["w2.txt"]
    assert not (Path(home.external_id).parent / "escape.txt").exists()


def test_over_the_cap_is_413_before_anything_is_written(auth_client, home, queued, settings) -> None:
    settings.INBOX_UPLOAD_MAX_BYTES = 1000

    small_body = upload(auth_client, home, "big.txt", b"a" * 1001)
    huge_body = upload(auth_client, home, "huge.txt", b"a" * 200_000)  # refused by its Content-Length

    assert (small_body.status_code, huge_body.status_code) == (413, 413)
    assert "at most 1,000 bytes (INBOX_UPLOAD_MAX_BYTES)" in small_body.json()["detail"]
    assert inbox_names(home) == ["w2.txt"]


def test_editors_may_upload_viewers_get_403_and_strangers_404(
    api_client, home, queued, other_user, django_user_model
) -> None:
    editor = django_user_model.objects.create_user(username="eddie", password="x")
    FolderMembership.objects.create(folder=home, user=editor, role="editor")
    FolderMembership.objects.create(folder=home, user=other_user, role="viewer")
    stranger = django_user_model.objects.create_user(username="stranger", password="x")

    api_client.force_authenticate(user=stranger)
    assert upload(api_client, home, "a.txt", W2).status_code == 404
    api_client.force_authenticate(user=other_user)
    refused = upload(api_client, home, "a.txt", W2)
    assert refused.status_code == 403 and "an editor" in refused.json()["detail"]
    assert inbox_names(home) == ["w2.txt"]

    api_client.force_authenticate(user=editor)
    assert upload(api_client, home, "a.txt", W2).status_code == 201
    assert inbox_names(home) == ["a.txt", "w2.txt"]

"""Reasons workers store (a file's skip or failure, a folder's sync error) are kept in English in the
database and shown in the reader's language (apps/core/stored_messages.py, issue 41)."""

from __future__ import annotations

import io
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from pypdf import PdfWriter

from apps.library.indexing import folder_index
from apps.library.models import File, SyncLog
from apps.library.sync import folder_sync
from tests.library.test_folder_events import read_events
from tests.support.files import write
from tests.support.tokens import api_token


def locked_pdf() -> bytes:
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.encrypt("secret")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def reasons(client, folder, *, language: str | None = None) -> dict[str, str]:
    headers = {"HTTP_ACCEPT_LANGUAGE": language} if language else {}
    response = client.get(f"/api/folders/{folder.pk}/files", **headers)
    assert response.status_code == 200, response.json()
    return {file["path"]: file["error"] for file in response.json()["results"] if file["status"] != "indexed"}


def index_unreadable_files(root, folder) -> None:
    (root / "locked.pdf").write_bytes(locked_pdf())
    (root / "broken.docx").write_bytes(b"PK\x03\x04 not really a zip")
    (root / "blob.txt").write_bytes(b"\x00\x01\x02 binary \x00" * 40)
    write(root, "notes.md", "# Notes\n\nThe boiler was serviced in March.")
    folder_index(folder_id=folder.pk, inline=True)


@pytest.mark.django_db
def test_a_file_that_fails_to_parse_lists_its_reason_in_the_readers_language(auth_client, folder, root):
    index_unreadable_files(root, folder)

    english = reasons(auth_client, folder)
    german = reasons(auth_client, folder, language="de")

    assert english["locked.pdf"] == "password-protected PDF"
    assert german["locked.pdf"] == "passwortgeschütztes PDF"
    assert english["blob.txt"] == "binary data: the file contains NUL bytes, so it is not text"
    assert german["blob.txt"] == "Binärdaten: die Datei enthält NUL-Bytes, ist also kein Text"
    # The format is our word and is translated; the library's own message stays as it was.
    assert english["broken.docx"].startswith("corrupt Word document: ")
    library_message = english["broken.docx"].removeprefix("corrupt Word document: ")
    assert german["broken.docx"] == f"Word-Dokument ist beschädigt: {library_message}"
    # The database keeps the English text for operators, the admin and grep.
    stored = File.objects.get(folder=folder, path="locked.pdf")
    assert (stored.status, stored.error) == ("failed", "password-protected PDF")
    assert stored.error_i18n == {"msgid": "password-protected PDF", "params": {}}


@pytest.mark.django_db
def test_a_reason_stored_before_translations_is_shown_unchanged(auth_client, folder):
    File.objects.create(folder=folder, external_id="old.pdf", path="old.pdf", name="old.pdf", status="failed")
    File.objects.filter(path="old.pdf").update(error="ValueError: bad xref table")

    assert reasons(auth_client, folder, language="de") == {"old.pdf": "ValueError: bad xref table"}


@pytest.mark.django_db
def test_a_sync_error_is_shown_in_french(auth_client, folder, root):
    shutil.rmtree(root)

    log = folder_sync(folder_id=folder.pk)

    assert log is not None and log.error.startswith(f"The folder {root} no longer exists on worker host")
    french = auth_client.get(f"/api/folders/{folder.pk}", HTTP_ACCEPT_LANGUAGE="fr").json()
    assert french["last_error"].startswith(f"Le dossier {root} n\u2019existe plus sur l\u2019h\u00f4te de worker ")
    english = auth_client.get(f"/api/folders/{folder.pk}").json()
    assert english["last_error"] == log.error
    history = auth_client.get(f"/api/folders/{folder.pk}/sync-log", HTTP_ACCEPT_LANGUAGE="fr").json()
    assert history["results"][0]["error"] == french["last_error"]
    assert SyncLog.objects.get(pk=log.pk).error == log.error


@pytest.mark.django_db(transaction=True)
def test_the_folder_stream_carries_a_files_reason_in_the_readers_language(asgi_server, folder, root, user):
    (root / "locked.pdf").write_bytes(locked_pdf())
    connected = threading.Event()

    with ThreadPoolExecutor(1) as pool:
        # `indexing`, `file_started`, `file` and the listing's `scan`
        future = pool.submit(
            read_events,
            asgi_server,
            folder.pk,
            token=api_token(user),
            until=4,
            headers={"Accept-Language": "de"},
            connected=connected,
        )
        assert connected.wait(10)
        folder_index(folder_id=folder.pk, inline=True)
        received = future.result(timeout=30)

    (finished,) = [item.data for item in received if item.type == "file"]
    assert finished["error"] == "passwortgeschütztes PDF"
    assert finished["error_i18n"] == {"msgid": "password-protected PDF", "params": {}}

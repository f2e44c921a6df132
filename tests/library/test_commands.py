import io

import pytest
from django.core.management import CommandError, call_command

from apps.library.models import Chunk, File, Folder
from tests.support.documents import encrypted_pdf_bytes
from tests.support.files import write
from tests.support.servers import BASE_DIR


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def files(root):
    write(root, "notes/a.md", "# Plan\nShip Q4-2024 numbers to Dana Whitfield.")
    write(root, "locked.pdf", encrypted_pdf_bytes())
    return root


@pytest.mark.django_db
def test_folder_add_prints_the_id_and_is_idempotent(user, files, monkeypatch):
    out, _ = run("folder_add", "--local", str(files), "--owner", "alice")
    folder = Folder.objects.get(pk=int(out))
    assert folder.external_id == str(files) and folder.status == "pending"
    monkeypatch.chdir(files.parent)
    again, note = run("folder_add", "--local", files.name, "--owner", "alice")  # relative to the working directory
    assert again == out and "already connected" in note
    with pytest.raises(CommandError, match="No user"):
        run("folder_add", "--local", str(files), "--owner", "nobody")
    with pytest.raises(CommandError, match="outside the allowed local roots"):
        run("folder_add", "--local", "/etc", "--owner", "alice")


@pytest.mark.django_db
def test_folder_index_inline_indexes_and_summarises_with_reasons(user, files, make_folder):
    folder = make_folder(files)
    out, _ = run("folder_index", str(folder.pk), "--inline")
    assert "2/2 files" in out
    assert "files: 2 total, 1 indexed, 0 skipped, 1 failed, 0 pending" in out
    assert "failed   locked.pdf: password-protected PDF" in out
    assert "without search vector: 0" in out
    status, _ = run("folder_status", str(folder.pk))
    assert "status: ready" in status and "locked.pdf" in status
    with pytest.raises(CommandError, match="No folder"):
        run("folder_status", "999999")


@pytest.mark.django_db
def test_folder_index_wait_refuses_to_wait_without_a_worker(user, files, make_folder):
    folder = make_folder(files)
    with pytest.raises(CommandError, match="No running worker consumes the indexing_small, indexing queue"):
        run("folder_index", str(folder.pk), "--wait")


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_folder_index_wait_returns_when_the_folder_is_searchable(celery_worker_process, user, files, make_folder):
    folder = make_folder(files)
    out, _ = run("folder_index", str(folder.pk), "--wait", "--timeout", "60")
    assert "1 indexed" in out and "1 failed" in out
    assert File.objects.get(path="notes/a.md").status == "indexed"
    assert not Chunk.objects.filter(folder=folder, search_vector__isnull=True).exists()


@pytest.mark.django_db
def test_the_bundled_sample_folder_indexes_completely(user, settings):
    sample = BASE_DIR / "sample_folder"
    settings.LOCAL_FOLDER_ROOTS = [str(sample)]
    folder_id, _ = run("folder_add", "--local", str(sample), "--owner", "alice")
    run("folder_index", folder_id, "--inline")
    statuses = dict(File.objects.filter(folder_id=int(folder_id)).values_list("path", "status"))
    assert len(statuses) >= 15 and {"guideline.md", "inbox/W2_2024.pdf", "work/q4-2024-report.docx"} <= set(statuses)
    assert {path for path, status in statuses.items() if status != "indexed"} == set()
    # The receipt is a picture: OCR reads it, and its chunks say so.
    receipt = Chunk.objects.get(folder_id=int(folder_id), file__path="inbox/receipt-photo.png")
    assert "Receipt 0047-2291" in receipt.text and receipt.location["ocr"] is True
    assert Chunk.objects.filter(folder_id=int(folder_id), text__contains="INV-20931").count() >= 3
    assert not Chunk.objects.filter(folder_id=int(folder_id), search_vector__isnull=True).exists()

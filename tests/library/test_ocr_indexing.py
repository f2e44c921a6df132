"""Pictures and scans indexed by a real Celery worker, then found by a keyword search for a code
that only OCR can read."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader, PdfWriter

from apps.library.indexing import folder_index
from apps.library.models import File
from apps.search.selectors import chunk_search
from apps.search.types import SearchMode
from tests.support.documents import pdf_bytes
from tests.support.files import write
from tests.support.images import LETTER, jpeg, photo, png, scanned_pdf, text_image
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _contract() -> bytes:
    """Page 1 typed (a text layer), page 2 a scan carrying the reference."""
    writer = PdfWriter()
    typed = pdf_bytes(["Tenancy agreement between Harbor View Properties and Alex Morgan."])
    scan = scanned_pdf([text_image(["Tenancy terms, page 2", "Quote reference LEASE-4B-2025 on transfers."])])
    for data in (typed, scan):
        writer.append(PdfReader(io.BytesIO(data)))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_codes_in_images_and_scanned_pages_are_found_by_keyword_search(celery_worker_process, root, folder):
    letter = text_image(LETTER)
    write(root, "invoices/invoice-scan.png", png(letter))
    write(root, "photos/invoice-photo.jpg", jpeg(photo(letter, rotate=90)))
    write(root, "contracts/lease.pdf", _contract())
    write(root, "photos/broken.jpg", jpeg(letter)[:2000])
    write(root, "notes/todo.md", "# Todo\nPay the Northwind invoice.")

    folder_index(folder_id=folder.pk)
    wait_for(
        lambda: not File.objects.filter(folder=folder, status__in=["pending", "indexing"]).exists(),
        what="the folder to be indexed",
        timeout=180,
        process=celery_worker_process,
    )

    files = {row[0]: row[1:] for row in File.objects.filter(folder=folder).values_list("path", "status", "error")}
    assert files["photos/broken.jpg"][0] == "failed" and files["photos/broken.jpg"][1].startswith("unreadable image")
    assert {path for path, (status, _) in files.items() if status == "indexed"} == {
        "invoices/invoice-scan.png",
        "photos/invoice-photo.jpg",
        "contracts/lease.pdf",
        "notes/todo.md",
    }

    hits = chunk_search(folder_id=folder.pk, query="INV-20931", mode=SearchMode.KEYWORD)
    assert {hit.path for hit in hits} == {"invoices/invoice-scan.png", "photos/invoice-photo.jpg"}
    assert all(hit.location.get("ocr") is True for hit in hits)

    # The scanned page 2 is its chunk's page, or its last page when one chunk holds both pages.
    [lease] = chunk_search(folder_id=folder.pk, query="LEASE-4B-2025", mode=SearchMode.KEYWORD)
    assert lease.path == "contracts/lease.pdf" and lease.location["ocr"] is True
    assert lease.location.get("page_end", lease.location["page"]) == 2

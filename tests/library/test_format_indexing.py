"""Office, OpenDocument, epub, email and web pages through the real indexing path: indexed with
their locations and found by search; hostile packages fail or are skipped alone, with a reason."""

import pytest

from apps.library.indexing import folder_index
from apps.library.models import Chunk, File
from apps.search.selectors import chunk_search
from apps.search.types import SearchMode
from tests.support.files import write
from tests.support.office_documents import (
    eml_bytes,
    encrypted_office_bytes,
    epub_bytes,
    odp_bytes,
    ods_bytes,
    odt_bytes,
    pptx_bytes,
    rtf_bytes,
    xlsx_bytes,
    zip_bomb_bytes,
)
from tests.support.web_pages import CHAPTERS, manual_page_html

pytestmark = pytest.mark.django_db


@pytest.fixture
def office_folder(root):
    write(root, "finance/report.xlsx", xlsx_bytes())
    write(root, "talks/results.pptx", pptx_bytes())
    write(root, "home/lease.odt", odt_bytes())
    write(root, "home/budget.ods", ods_bytes())
    write(root, "talks/roadmap.odp", odp_bytes())
    write(root, "finance/invoice.rtf", rtf_bytes())
    write(root, "books/sailing.epub", epub_bytes())
    write(root, "mail/renewal.eml", eml_bytes())
    write(root, "manual/sync.html", manual_page_html())
    write(root, "manual/old.html", '<html><head><meta http-equiv="refresh" content="0; url=sync.html"></head></html>')
    write(root, "bad/bomb.docx", zip_bomb_bytes(member="word/document.xml", size=300_000_000))
    write(root, "bad/locked.xlsx", encrypted_office_bytes(xlsx_bytes()))
    return root


def test_every_format_is_indexed_and_bad_packages_fail_alone(office_folder, folder):
    folder_index(folder_id=folder.pk, inline=True)

    files = {row["path"]: row for row in File.objects.filter(folder=folder).values("path", "status", "error")}
    assert {path for path, row in files.items() if row["status"] == "indexed"} == {
        "finance/report.xlsx",
        "talks/results.pptx",
        "home/lease.odt",
        "home/budget.ods",
        "talks/roadmap.odp",
        "finance/invoice.rtf",
        "books/sailing.epub",
        "mail/renewal.eml",
        "manual/sync.html",
    }
    assert files["manual/old.html"]["status"] == "skipped"
    assert files["manual/old.html"]["error"] == "redirect stub to sync.html"
    assert files["bad/bomb.docx"]["status"] == "skipped"
    assert "possibly a zip bomb" in files["bad/bomb.docx"]["error"]
    assert files["bad/locked.xlsx"]["status"] == "failed"
    assert files["bad/locked.xlsx"]["error"].startswith("password-protected Excel workbook")
    assert not Chunk.objects.filter(folder=folder, text__contains=CHAPTERS[-1]).exists()


# Each code, the file it is in and where in that file its chunk starts.
FOUND_AT = [
    ("AX-7731", "finance/report.xlsx", {"sheet": "Notes", "range": "B3:C5"}),
    ("Berlin office", "talks/results.pptx", {"slide": 1, "heading": ["Quarterly results"]}),
    ("DP-7731", "home/lease.odt", {"heading": ["Lease terms", "Deposit"]}),
    ("RM-25", "talks/roadmap.odp", {"slide": 2, "heading": ["Roadmap 2025"]}),
    ("HB-4410", "books/sailing.epub", {"chapter": 1, "heading": ["Harbours"]}),
    ("DEP-7781", "mail/renewal.eml", {"attachment": "deposit.txt"}),
    ("SYNC-4471", "manual/sync.html", {"heading": ["Synchronising mirrors", "Retries and error codes"]}),
    ("RT-5521", "finance/invoice.rtf", {}),
]


def test_search_finds_each_format_at_its_location(office_folder, folder, settings):
    settings.CHUNK_TOKENS = 20  # small chunks, so that sections (sheets, slides, chapters) get their own
    folder_index(folder_id=folder.pk, inline=True)

    found = {}
    for query, _, location in FOUND_AT:
        hit = chunk_search(folder_id=folder.pk, query=query, k=3, mode=SearchMode.KEYWORD)[0]
        found[query] = (hit.path, {key: hit.location.get(key) for key in location})

    assert found == {query: (path, location) for query, path, location in FOUND_AT}

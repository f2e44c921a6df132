"""Through a real Celery worker: a German folder of manual pages and office documents whose words
sit in a table and a header is indexed whole, its language detected, and its keyword vectors
recomputed when a person changes the language."""

import shutil
import uuid

import pytest

from apps.library.models import File, Folder
from apps.library.services import folder_index_enqueue
from apps.search.selectors import chunk_search
from apps.search.types import SearchMode
from tests.support.document_parts import docx_parts_bytes, odt_parts_bytes
from tests.support.german_pages import german_manual_page
from tests.support.servers import BASE_DIR
from tests.support.waiting import wait_for

INFLECTED = "Elternverzeichnissen Meldungen"  # mkdir(1) says "Elternverzeichnisse", "Meldung"


@pytest.fixture
def german_folder(user):
    path = BASE_DIR / "var" / "folders" / f"german-{uuid.uuid4().hex[:8]}"  # under LOCAL_FOLDER_ROOTS
    path.mkdir(parents=True)
    for name in ("mkdir", "ls", "cp"):
        (path / f"{name}.txt").write_text(german_manual_page(name))
    table = [["Mieter", "Miete"], ["Familie Schröder, Erdgeschoss links", "Kaltmiete TBL-4410"]]
    (path / "mieter.odt").write_bytes(odt_parts_bytes(table=table, header="", footer="", frame="", note="", comment=""))
    (path / "brief.docx").write_bytes(
        docx_parts_bytes(
            table=table, header="Hausverwaltung HDR-5520", footer="Seite 1", text_box="Bitte beachten", comment="ok"
        )
    )
    yield Folder.objects.create(owner=user, source="local", external_id=str(path), name="Handbuch")
    shutil.rmtree(path, ignore_errors=True)


def keyword_paths(folder, query):
    return [hit.path for hit in chunk_search(folder_id=folder.pk, query=query, mode=SearchMode.KEYWORD)]


def test_a_worker_indexes_a_german_folder_and_reindexes_its_keywords_in_a_new_language(
    german_folder, celery_worker_process, auth_client
):
    folder = german_folder
    folder_index_enqueue(folder=folder)
    wait_for(
        lambda: File.objects.filter(folder=folder, status="indexed").count() == 5,
        what="five files indexed",
        process=celery_worker_process,
    )
    folder.refresh_from_db()
    assert folder.language == "german"
    assert keyword_paths(folder, INFLECTED) == ["mkdir.txt"]
    assert set(keyword_paths(folder, "TBL-4410")) == {"brief.docx", "mieter.odt"}
    assert keyword_paths(folder, "HDR-5520") == ["brief.docx"]

    changed = auth_client.patch(f"/api/folders/{folder.pk}", {"language": "english"}, format="json")
    assert changed.status_code == 200
    wait_for(lambda: keyword_paths(folder, INFLECTED) == [], what="English vectors", process=celery_worker_process)

    auth_client.patch(f"/api/folders/{folder.pk}", {"language": "german"}, format="json")
    wait_for(
        lambda: keyword_paths(folder, INFLECTED) == ["mkdir.txt"],
        what="German vectors again",
        process=celery_worker_process,
    )

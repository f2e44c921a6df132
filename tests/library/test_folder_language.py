"""A folder's language: detected from its first files, editable, and the keyword side's stemming.

German text is Debian's German manual pages (manpages-de). A question's words inflected otherwise
than the page's ("Elternverzeichnissen", "Meldungen" against mkdir(1)'s "Elternverzeichnisse",
"Meldung") match only under German stemming.
"""

import pytest

from apps.library.backfill import search_vectors_recompute
from apps.library.indexing import folder_index
from apps.library.language import language_detect
from apps.library.models import FolderMembership
from apps.library.services import folder_update
from apps.search.selectors import chunk_search, file_search
from apps.search.types import SearchMode
from tests.support.files import write
from tests.support.german_pages import german_manual_page

INFLECTED = "Elternverzeichnissen Meldungen"
QUESTION = "Welcher Befehl legt Elternverzeichnissen an und gibt Meldungen aus?"
FRENCH = (
    "Le bail est renouvelé chaque année au premier mars, sauf si le locataire donne son préavis trois mois "
    "avant cette date. Le dépôt de garantie est rendu dans les deux mois qui suivent la remise des clés, "
    "déduction faite des réparations locatives que le propriétaire peut justifier par des factures."
)
JAPANESE = "賃貸契約は毎年三月一日に更新されます。借主は三か月前までに通知しなければなりません。" * 8


def keyword_paths(folder, query):
    return [hit.path for hit in chunk_search(folder_id=folder.pk, query=query, mode=SearchMode.KEYWORD)]


def file_paths(folder, query):
    return [hit.path for hit in file_search(folder_id=folder.pk, query=query, mode=SearchMode.KEYWORD)]


def test_the_language_is_detected_from_enough_text():
    assert language_detect(text=german_manual_page("mkdir")) == "german"
    assert language_detect(text=FRENCH) == "french"
    # No stemmer for Japanese in PostgreSQL: words are kept as written.
    assert language_detect(text=JAPANESE) == "simple"
    assert language_detect(text="Mietvertrag 2024") is None


@pytest.fixture
def german_folder(root, folder):
    for name in ("mkdir", "ls", "cp", "rm"):
        write(root, f"{name}.txt", german_manual_page(name))
    assert folder.language == ""  # a new folder: not decided yet
    return folder


@pytest.mark.django_db
def test_a_german_folder_answers_a_german_question_through_german_stemming(german_folder):
    folder = german_folder
    folder_index(folder_id=folder.pk, inline=True)
    folder.refresh_from_db()
    assert folder.language == "german"
    assert keyword_paths(folder, QUESTION)[0] == "mkdir.txt"
    assert keyword_paths(folder, INFLECTED) == ["mkdir.txt"]
    assert [
        hit.path for hit in file_search(folder_id=folder.pk, query="Elternverzeichnissen", mode=SearchMode.KEYWORD)
    ] == ["mkdir.txt"]

    # Read as English, "Elternverzeichnissen" and "Meldungen" are words no page holds.
    folder_update(folder=folder, language="english")
    assert search_vectors_recompute(folder_id=folder.pk).rows > 20
    assert keyword_paths(folder, INFLECTED) == []
    assert file_paths(folder, "Elternverzeichnissen") == []

    folder_update(folder=folder, language="german")
    search_vectors_recompute(folder_id=folder.pk)
    assert keyword_paths(folder, INFLECTED) == ["mkdir.txt"]


@pytest.mark.django_db
def test_a_language_chosen_before_indexing_is_kept(root, folder):
    write(root, "bail.txt", FRENCH)
    folder_update(folder=folder, language="simple")
    folder_index(folder_id=folder.pk, inline=True)
    folder.refresh_from_db()
    assert folder.language == "simple"
    # "simple" keeps every word as written: "renouvelé" is not "renouveler".
    assert keyword_paths(folder, "renouvelé") == ["bail.txt"]
    assert keyword_paths(folder, "renouveler") == []


@pytest.mark.django_db
def test_the_language_is_an_editors_setting_and_a_bad_one_is_refused(auth_client, other_client, folder, other_user):
    url = f"/api/folders/{folder.pk}"
    assert auth_client.get(url).json()["language"] == ""

    refused = auth_client.patch(url, {"language": "klingon"}, format="json")
    assert refused.status_code == 400 and "klingon" in str(refused.json())
    assert other_client.patch(url, {"language": "german"}, format="json").status_code == 404
    FolderMembership.objects.create(folder=folder, user=other_user, role="viewer")
    assert other_client.patch(url, {"language": "german"}, format="json").status_code == 403

    changed = auth_client.patch(url, {"language": "german"}, format="json")
    assert changed.status_code == 200 and changed.json()["language"] == "german"
    folder.refresh_from_db()
    assert folder.language == "german"

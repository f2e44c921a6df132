import pytest

from apps.search.selectors import file_search
from apps.search.types import SearchFilters, SearchMode
from tests.support.search_corpus import make_file

pytestmark = pytest.mark.django_db


def test_finds_a_file_by_parts_of_its_name(corpus):
    hits = file_search(folder_id=corpus.folder.pk, query="W2 2024", k=3, mode=SearchMode.KEYWORD)
    assert hits[0].file_id == corpus.files["w2"].pk
    assert hits[0].file_name == "W2_2024.pdf" and hits[0].path == "inbox/W2_2024.pdf"
    assert hits[0].mime_type == "application/pdf"


def test_name_match_outranks_preview_match(corpus):
    in_preview = make_file(corpus.folder, "misc/notes.md", preview="an old budget draft")
    in_name = make_file(corpus.folder, "misc/budget.md", preview="numbers")
    hits = file_search(folder_id=corpus.folder.pk, query="budget", k=5, mode=SearchMode.KEYWORD)
    assert [hit.file_id for hit in hits[:2]] == [in_name.pk, in_preview.pk]


def test_hybrid_fuses_name_and_embedding(corpus):
    hits = file_search(folder_id=corpus.folder.pk, query="wage statement", k=3)
    assert hits[0].file_id == corpus.files["w2"].pk
    assert hits[0].keyword_rank == 1 and hits[0].vector_rank is not None


def test_file_search_honours_filters_and_scope(corpus, other_corpus):
    hits = file_search(
        folder_id=corpus.folder.pk, query="report summary sales", k=20, filters=SearchFilters(path_prefix="reports/")
    )
    assert hits and all(hit.path.startswith("reports/") for hit in hits)
    own = {file.pk for file in corpus.folder.files.all()}
    assert {hit.file_id for hit in file_search(folder_id=corpus.folder.pk, query="W2", k=100)} <= own


def test_blank_file_query_returns_nothing(corpus):
    assert file_search(folder_id=corpus.folder.pk, query="  ") == []

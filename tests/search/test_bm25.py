"""The keyword side's BM25 as bm25s computes it: repeated question words, each file scored as a
whole too, all lexemes of a small folder, and the question's embedding computed once per text."""

import pytest

from apps.embeddings.providers import get_embedder
from apps.library.models import Folder
from apps.search import selectors
from apps.search.selectors import chunk_search
from apps.search.services import folder_lexeme_stats_refresh
from apps.search.types import SearchMode
from tests.support.search_corpus import make_chunks, make_file

pytestmark = pytest.mark.django_db


def _folder(user, name):
    return Folder.objects.create(owner=user, source="local", external_id=f"/srv/{name}", name=name)


def test_a_word_the_question_repeats_counts_more(user):
    folder = _folder(user, "repeats")
    # Same document frequency, same length: only the question's counts tell them apart.
    (glacier,) = make_chunks(make_file(folder, "glacier.txt"), ["glacier survey notes"])
    (volcano,) = make_chunks(make_file(folder, "volcano.txt"), ["volcano survey notes"])
    make_chunks(make_file(folder, "filler.txt"), [f"field notes {i}" for i in range(10)])
    folder_lexeme_stats_refresh(folder_id=folder.pk)
    hits = chunk_search(
        folder_id=folder.pk, query="the volcano, a glacier: which volcano?", k=2, mode=SearchMode.KEYWORD
    )
    assert [hit.chunk_id for hit in hits] == [volcano.pk, glacier.pk]
    assert hits[0].keyword_score > hits[1].keyword_score


def test_a_passage_in_a_file_about_the_question_comes_first(user):
    folder = _folder(user, "evidence")
    # The same passage twice: its own BM25 cannot tell them apart, the files around it can.
    filler = "notes on the harbour crane schedule"
    aside = make_chunks(make_file(folder, "aside.txt"), ["glacier survey notes", filler, filler, filler])[0]
    about = make_chunks(
        make_file(folder, "glaciers.txt"),
        ["glacier survey notes", "glacier ice depth", "glacier moraine walk", "glacier melt season"],
    )[0]
    make_chunks(make_file(folder, "filler.txt"), [f"field notes {i}" for i in range(10)])
    folder_lexeme_stats_refresh(folder_id=folder.pk)
    hits = chunk_search(folder_id=folder.pk, query="glacier survey", k=5, mode=SearchMode.KEYWORD)
    assert aside.pk < about.pk  # the tie-break alone would put the aside first
    assert [hit.chunk_id for hit in hits[:2]] == [about.pk, aside.pk]
    hybrid = chunk_search(folder_id=folder.pk, query="glacier survey", k=5, weights=(0.0, 1.0))
    assert [hit.chunk_id for hit in hybrid[:2]] == [about.pk, aside.pk]


def test_a_scanned_folder_ranks_chunks_holding_only_common_words(user, monkeypatch):
    folder = _folder(user, "common")
    make_chunks(make_file(folder, "rare.txt"), ["zeppelin"])
    make_chunks(make_file(folder, "lanterns.txt"), [f"lantern {i}" for i in range(60)])
    harbors = make_chunks(make_file(folder, "harbors.txt"), [f"harbor {i}" for i in range(60)])
    folder_lexeme_stats_refresh(folder_id=folder.pk)
    # A row budget of 100 would stop at "lantern" (cumulative document frequency 1, 61, 121).
    monkeypatch.setattr(selectors, "KEYWORD_CANDIDATE_CAP", 100)
    hits = chunk_search(folder_id=folder.pk, query="zeppelin lantern harbor", k=100, mode=SearchMode.KEYWORD)
    found = {hit.chunk_id for hit in hits}
    assert len(hits) == 100 and hits[0].file_name == "rare.txt"
    assert found & {chunk.pk for chunk in harbors}


def test_the_question_is_embedded_once_per_text(corpus, monkeypatch):
    embedder = get_embedder("hash")
    calls = []

    def counting(text):
        calls.append(text)
        return type(embedder).embed_query(embedder, text)

    selectors._query_embedding.cache_clear()
    monkeypatch.setattr(embedder, "embed_query", counting)
    question = "Which board minutes mention the Q4-2024 close?"
    first = chunk_search(folder_id=corpus.folder.pk, query=question, k=5)
    again = chunk_search(folder_id=corpus.folder.pk, query=question, k=5, mode=SearchMode.VECTOR)
    chunk_search(folder_id=corpus.folder.pk, query="another question", k=5)
    assert calls == [question, "another question"]
    assert [hit.chunk_id for hit in again][:1] == [hit.chunk_id for hit in first if hit.vector_rank == 1]

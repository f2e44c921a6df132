import datetime as dt
import random

import pytest
from django.db import connection

from apps.core.api import ApplicationError
from apps.embeddings.providers import get_embedder
from apps.library.models import Chunk, Folder
from apps.search import planning
from apps.search.selectors import chunk_search
from apps.search.services import folder_lexeme_stats_refresh
from apps.search.types import SearchFilters, SearchMode
from tests.support.search_corpus import (
    CODE_QUESTION,
    FILLER_WORDS,
    QUESTION,
    build_corpus,
    chunk_ids,
    make_chunks,
    make_file,
)

pytestmark = pytest.mark.django_db


def _ids(hits):
    return [hit.chunk_id for hit in hits]


def test_keyword_only_hit_surfaces_in_hybrid(corpus):
    hits = chunk_search(folder_id=corpus.folder.pk, query=CODE_QUESTION, k=3)
    (top,) = (hit for hit in hits if hit.chunk_id == corpus.chunks["code"].pk)
    assert top.keyword_rank == 1 and top.vector_rank is None  # the embedding missed it
    assert top.file_id == corpus.files["code"].pk
    assert top.file_name == "summary-2024.md" and top.path == "reports/finance/summary-2024.md"
    assert "Q4-2024" in top.text and top.location == {"chunk": 0}


def test_vector_only_hit_surfaces_in_hybrid_next_to_keyword_hits(corpus):
    hits = chunk_search(folder_id=corpus.folder.pk, query=QUESTION, k=5)
    by_id = {hit.chunk_id: hit for hit in hits}
    near = by_id[corpus.chunks["near"].pk]
    assert near.vector_rank == 1 and near.keyword_rank is None
    assert near.distance == pytest.approx(0.0, abs=1e-6)
    finance = by_id[corpus.chunks["finance"].pk]
    assert finance.keyword_rank == 1 and finance.vector_rank is not None
    assert _ids(hits)[0] == corpus.chunks["finance"].pk  # found by both sides: first


def test_every_keyword_match_votes_next_to_an_exact_code(user):
    folder = Folder.objects.create(owner=user, source="local", external_id="/srv/meadows", name="meadows")
    rng = random.Random(5)
    # "meadow" in every file but one: common in chunks and in files alike.
    for number in range(30):
        make_chunks(make_file(folder, f"walks/{number}.txt"), [" ".join(["meadow", *rng.choices(FILLER_WORDS, k=20)])])
    # Found by keywords only: its vector points away from the question.
    (code,) = make_chunks(
        make_file(folder, "minutes.md"),
        ["Board minutes: the Q4-2024 close is signed off."],
        embeddings=[-get_embedder("hash").embed_query("Q4-2024 meadow")],
    )
    folder_lexeme_stats_refresh(folder_id=folder.pk)
    keyword = chunk_search(folder_id=folder.pk, query="Q4-2024 meadow", k=50, mode=SearchMode.KEYWORD)
    assert keyword[0].chunk_id == code.pk and len(keyword) == 31
    # Plain RRF: no floor on keyword scores (issue 42), so the common-word matches vote too and the
    # code, first on one side and last on the other, ranks below rows both sides hold.
    hybrid = chunk_search(folder_id=folder.pk, query="Q4-2024 meadow", k=50)
    assert sorted(hit.chunk_id for hit in hybrid if hit.keyword_rank is not None) == sorted(_ids(keyword))
    (found,) = (hit for hit in hybrid if hit.chunk_id == code.pk)
    assert found.keyword_rank == 1 and found.score == pytest.approx(1 / 61 + 1 / (60 + found.vector_rank))


def test_modes_use_one_side_each(corpus):
    vector = chunk_search(folder_id=corpus.folder.pk, query=CODE_QUESTION, k=10, mode=SearchMode.VECTOR)
    assert corpus.chunks["code"].pk not in _ids(vector)
    assert all(hit.keyword_rank is None and hit.vector_rank for hit in vector)
    keyword = chunk_search(folder_id=corpus.folder.pk, query=CODE_QUESTION, k=10, mode="keyword")
    assert _ids(keyword) == [corpus.chunks["code"].pk]
    assert keyword[0].vector_rank is None and keyword[0].keyword_score > 0


def test_long_natural_language_question_still_matches(corpus):
    question = (
        "Could you please tell me what the board decided about closing the books for Q4-2024, and whether "
        "anything about that was written down in the minutes that were circulated afterwards?"
    )
    hits = chunk_search(folder_id=corpus.folder.pk, query=question, k=5, mode=SearchMode.KEYWORD)
    assert _ids(hits)[0] == corpus.chunks["code"].pk


@pytest.mark.parametrize("mode", [SearchMode.VECTOR, SearchMode.KEYWORD])
def test_one_side_scores_follow_the_rrf_formula(corpus, mode):
    hits = chunk_search(folder_id=corpus.folder.pk, query=QUESTION, k=20, mode=mode, rrf_k=10, weights=(2.0, 0.5))
    for hit in hits:
        expected = 2.0 / (10 + hit.vector_rank) if mode is SearchMode.VECTOR else 0.5 / (10 + hit.keyword_rank)
        assert hit.score == pytest.approx(expected)


def _rrf_terms(weight: float, rrf_k: int, ranks: int) -> list[float]:
    return [0.0] + [weight / (rrf_k + rank) for rank in range(1, ranks + 1)]


def test_hybrid_scores_are_rrf_of_the_two_rankings(corpus):
    hits = chunk_search(folder_id=corpus.folder.pk, query="outlook revenue", k=20, rrf_k=10, weights=(2.0, 0.5))
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    # Each score is one vector term plus one keyword term, either of which may be missing (no row
    # holds "outlook revenue" in that order).
    sums = {round(v + k, 12) for v in _rrf_terms(2.0, 10, 100) for k in _rrf_terms(0.5, 10, 100)}
    assert all(round(hit.score, 12) in sums for hit in hits)


def test_a_row_holding_the_question_as_a_phrase_gets_no_extra_vote(corpus):
    hits = chunk_search(folder_id=corpus.folder.pk, query=QUESTION, k=20, rrf_k=10, weights=(2.0, 0.5))
    finance = next(hit for hit in hits if hit.chunk_id == corpus.chunks["finance"].pk)
    # "Quarterly revenue figures rose again": the question's three words in a row, which counts for
    # nothing beyond its two ranks (a vote for the wording was dropped, issue 42).
    assert finance.keyword_rank == 1
    assert finance.score == pytest.approx(2.0 / (10 + finance.vector_rank) + 0.5 / 11)


def test_weights_can_switch_a_side_off(corpus):
    hits = chunk_search(folder_id=corpus.folder.pk, query=QUESTION, k=3, weights=(0.0, 1.0))
    assert _ids(hits)[0] == corpus.chunks["finance"].pk
    assert corpus.chunks["near"].pk not in _ids(hits[:1])


def test_blank_query_returns_nothing(corpus):
    for query in ["", "   ", "\n\t", "\x00"]:
        assert chunk_search(folder_id=corpus.folder.pk, query=query) == []


def test_only_stopwords_still_searches_by_vector(corpus):
    assert chunk_search(folder_id=corpus.folder.pk, query="the and of", mode=SearchMode.KEYWORD) == []
    assert len(chunk_search(folder_id=corpus.folder.pk, query="the and of", k=4)) == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be"),
        ({"k": 101}, "k must be"),
        ({"mode": "fuzzy"}, "Unknown search mode"),
        ({"query": "x" * 2001}, "longer than"),
    ],
)
def test_invalid_arguments_raise_application_errors(corpus, kwargs, message):
    with pytest.raises(ApplicationError, match=message):
        chunk_search(folder_id=corpus.folder.pk, **{"query": "revenue", **kwargs})


def test_results_never_leave_the_folder(corpus, other_corpus):
    own = chunk_ids(corpus.folder)
    for mode in SearchMode:
        for query in [CODE_QUESTION, QUESTION, "harbour lantern"]:
            hits = chunk_search(folder_id=corpus.folder.pk, query=query, k=100, mode=mode)
            assert hits and set(_ids(hits)) <= own


def test_bm25_prefers_the_rarer_term(user):
    corpus = build_corpus(user, name="idf")
    common = make_file(corpus.folder, "common.txt")
    make_chunks(common, [f"meadow meadow report {i}" for i in range(30)])
    rare = make_file(corpus.folder, "rare.txt")
    (rare_chunk,) = make_chunks(rare, ["a zeppelin report"])
    folder_lexeme_stats_refresh(folder_id=corpus.folder.pk)
    hits = chunk_search(folder_id=corpus.folder.pk, query="zeppelin meadow", k=3, mode=SearchMode.KEYWORD)
    assert hits[0].chunk_id == rare_chunk.pk


def test_keyword_search_works_without_statistics(user):
    corpus = build_corpus(user, name="nostats", refresh_stats=False)
    hits = chunk_search(folder_id=corpus.folder.pk, query=CODE_QUESTION, k=3, mode=SearchMode.KEYWORD)
    assert hits[0].chunk_id == corpus.chunks["code"].pk and hits[0].keyword_rank == 1


def test_stale_statistics_still_find_new_chunks(corpus):
    late = make_file(corpus.folder, "late.md")
    (chunk,) = make_chunks(late, ["The xylophone inventory arrived after the last refresh."])
    hits = chunk_search(folder_id=corpus.folder.pk, query="xylophone inventory", k=3, mode=SearchMode.KEYWORD)
    assert hits[0].chunk_id == chunk.pk


def test_chunks_waiting_for_their_search_vector_are_found_by_vector(corpus):
    Chunk.objects.filter(pk=corpus.chunks["finance"].pk).update(search_vector=None)
    hits = chunk_search(folder_id=corpus.folder.pk, query=QUESTION, k=5)
    finance = next(hit for hit in hits if hit.chunk_id == corpus.chunks["finance"].pk)
    assert finance.keyword_rank is None and finance.vector_rank is not None


def test_filters_apply_to_both_sides(corpus):
    folder_id = corpus.folder.pk
    in_reports = chunk_search(folder_id=folder_id, query=QUESTION, k=50, filters=SearchFilters(path_prefix="reports/"))
    assert in_reports and all(hit.path.startswith("reports/") for hit in in_reports)
    pdfs = chunk_search(
        folder_id=folder_id, query=QUESTION, k=50, filters=SearchFilters(mime_types=("application/pdf",))
    )
    assert {hit.path for hit in pdfs} == {"reports/sales.pdf", "inbox/W2_2024.pdf"}
    recent = chunk_search(
        folder_id=folder_id,
        query=CODE_QUESTION,
        k=50,
        filters=SearchFilters(
            modified_after=dt.datetime(2024, 10, 1, tzinfo=dt.UTC),
            modified_before=dt.datetime(2025, 1, 1, tzinfo=dt.UTC),
        ),
    )
    assert {hit.path for hit in recent} == {"reports/sales.pdf"}
    nothing = chunk_search(folder_id=folder_id, query=CODE_QUESTION, filters=SearchFilters(path_prefix="nope/"))
    assert nothing == []


def test_path_prefix_is_literal_not_a_pattern(corpus):
    hits = chunk_search(folder_id=corpus.folder.pk, query=QUESTION, filters=SearchFilters(path_prefix="%"))
    assert hits == []
    hits = chunk_search(folder_id=corpus.folder.pk, query=QUESTION, filters=SearchFilters(path_prefix="report_/"))
    assert hits == []


@pytest.mark.parametrize("mode", [SearchMode.KEYWORD, SearchMode.HYBRID])
def test_keyword_access_paths_agree(corpus, other_corpus, monkeypatch, mode):
    queries = [CODE_QUESTION, QUESTION, "harbour lantern meadow", "W-2 wage statement employee"]
    scanned = [chunk_search(folder_id=corpus.folder.pk, query=q, k=20, mode=mode) for q in queries]
    monkeypatch.setattr(planning, "KEYWORD_SCAN_MAX_ROWS", 0)
    monkeypatch.setattr(planning, "KEYWORD_FILTER_MIN_SHARE", 1.1)
    indexed = [chunk_search(folder_id=corpus.folder.pk, query=q, k=20, mode=mode) for q in queries]
    monkeypatch.setattr(planning, "KEYWORD_FILTER_MIN_SHARE", 0.0)
    filtered = [chunk_search(folder_id=corpus.folder.pk, query=q, k=20, mode=mode) for q in queries]
    assert scanned == indexed == filtered


@pytest.fixture
def force_hnsw(monkeypatch):
    """Treat the test folder as large, so the HNSW leg (and its exact fallback) runs."""
    monkeypatch.setattr(planning, "EXACT_MAX_ROWS", 0)
    monkeypatch.setattr(planning, "folder_partition", lambda *, folder_id: planning.FolderPartition(None, 200))


def test_hnsw_plan_gives_the_exact_answer_on_a_small_folder(corpus, force_hnsw):
    hnsw = chunk_search(folder_id=corpus.folder.pk, query=QUESTION, k=10, mode=SearchMode.VECTOR)
    assert hnsw[0].chunk_id == corpus.chunks["near"].pk
    assert len(hnsw) == 10


def test_hnsw_leg_reads_the_halfvec_index_and_ranks_by_exact_distance(corpus, force_hnsw):
    vector = get_embedder("hash").embed_query(QUESTION)
    literal = "[" + ",".join(repr(float(x)) for x in vector) + "]"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, embedding <=> %s::vector FROM library_chunk WHERE folder_id = %s ORDER BY 2, id LIMIT 10",
            [literal, corpus.folder.pk],
        )
        exact = cursor.fetchall()
        cursor.execute(
            "SELECT DISTINCT tableoid::regclass::text FROM library_chunk WHERE folder_id = %s", [corpus.folder.pk]
        )
        (partition,) = cursor.fetchone()
        # The folder is tiny: without sorts or other scans (undone with the test's transaction) the
        # planner can only read it through its partition's HNSW index.
        for setting in ("enable_sort", "enable_seqscan", "enable_bitmapscan"):
            cursor.execute(f"SET LOCAL {setting} = off")
        scans = "SELECT pg_stat_get_xact_numscans(%s::regclass)"
        cursor.execute(scans, [f"{partition}_embedding_halfvec_hnsw"])
        (before,) = cursor.fetchone()
        hits = chunk_search(
            folder_id=corpus.folder.pk, query=QUESTION, k=10, mode=SearchMode.VECTOR, query_vector=vector
        )
        cursor.execute(scans, [f"{partition}_embedding_halfvec_hnsw"])
        (after,) = cursor.fetchone()
    assert after > before
    # The exact top 10 in the exact order, with the vector (not halfvec) distances.
    assert _ids(hits) == [row[0] for row in exact]
    assert [hit.distance for hit in hits] == pytest.approx([row[1] for row in exact], abs=1e-9)


def test_hnsw_plan_falls_back_to_exact_when_filters_starve_it(corpus, other_corpus, force_hnsw):
    hits = chunk_search(
        folder_id=corpus.folder.pk,
        query=QUESTION,
        k=5,
        mode=SearchMode.VECTOR,
        filters=SearchFilters(mime_types=("application/pdf",)),
    )
    assert [hit.chunk_id for hit in hits] == [corpus.chunks["near"].pk, corpus.chunks["w2"].pk]


def test_a_precomputed_question_vector_is_used(corpus):
    vector = get_embedder("hash").embed_query(QUESTION)
    hits = chunk_search(folder_id=corpus.folder.pk, query="unrelated words", k=1, mode="vector", query_vector=vector)
    assert hits[0].chunk_id == corpus.chunks["near"].pk

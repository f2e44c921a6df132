"""Hostile strings through every parameter: nothing breaks, nothing leaks, nothing changes."""

import datetime as dt

import pytest
from django.db import connection

from apps.library.models import Chunk, File
from apps.search.selectors import chunk_search, file_search
from apps.search.types import SearchFilters, SearchMode
from tests.support.search_corpus import chunk_ids

pytestmark = pytest.mark.django_db

HOSTILE = [
    "'",
    '"',
    "''; DROP TABLE library_chunk; --",
    "1' OR '1'='1",
    "revenue'); DELETE FROM library_file; --",
    "; SELECT pg_sleep(5)",
    "\\",
    "\\'",
    "$$",
    "$tag$ x $tag$",
    "%",
    "_",
    "%%s %(folder_id)s {query}",
    "Q4-2024 & revenue",
    "revenue | !revenue",
    "!revenue",
    "a <-> b",
    "a <2> b",
    "rev:*",
    "revenue:A",
    "(revenue",
    "revenue)",
    "((()))",
    "&|!<->:*()",
    "'revenue':* & !'x'",
    "\x00",
    "revenue\x00' OR 1=1 --",
    "\uff31\uff35\uff21\uff32\uff34\uff25\uff32 収益 🚀 ñ Ω \u202e\u200b",
    "é" * 2000,
    "🙂" * 2000,
    " ".join(["x"] * 1000),
    "-" * 2000,
    "a:* " * 500,
]


def _state():
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM library_chunk")
        chunks = cursor.fetchone()[0]
    return chunks, File.objects.count()


@pytest.mark.parametrize("mode", list(SearchMode))
def test_hostile_queries_are_harmless(corpus, other_corpus, mode):
    own = chunk_ids(corpus.folder)
    own_files = set(corpus.folder.files.values_list("id", flat=True))
    before = _state()
    for text in HOSTILE:
        hits = chunk_search(folder_id=corpus.folder.pk, query=text, k=100, mode=mode)
        assert {hit.chunk_id for hit in hits} <= own, text
        files = file_search(folder_id=corpus.folder.pk, query=text, k=100, mode=mode)
        assert {hit.file_id for hit in files} <= own_files, text
    assert _state() == before


def test_tsquery_operators_in_the_question_are_plain_words(corpus):
    # "!revenue" would mean NOT revenue if it reached to_tsquery; here it is the word revenue.
    negated = chunk_search(folder_id=corpus.folder.pk, query="!revenue", k=5, mode=SearchMode.KEYWORD)
    assert negated and negated[0].chunk_id == corpus.chunks["finance"].pk
    # An AND of a present and a missing word would match nothing; words are OR-ed.
    anded = chunk_search(folder_id=corpus.folder.pk, query="revenue & zzyzx", k=5, mode=SearchMode.KEYWORD)
    assert anded and anded[0].chunk_id == corpus.chunks["finance"].pk


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_filters_are_harmless(corpus, other_corpus, text):
    own = chunk_ids(corpus.folder)
    filters = [
        SearchFilters(path_prefix=text),
        SearchFilters(mime_types=(text, "application/pdf")),
        SearchFilters(mime_types=(text,)),
    ]
    for search_filters in filters:
        for mode in SearchMode:
            hits = chunk_search(
                folder_id=corpus.folder.pk, query=f"revenue {text[:100]}", k=50, mode=mode, filters=search_filters
            )
            assert {hit.chunk_id for hit in hits} <= own
            assert all(hit.path.startswith(text) for hit in hits if search_filters.path_prefix)
            file_search(folder_id=corpus.folder.pk, query=text, filters=search_filters, mode=mode)
    assert Chunk.objects.filter(folder=corpus.folder).count() == len(own)


def test_extreme_dates_are_harmless(corpus):
    filters = SearchFilters(
        modified_after=dt.datetime(1, 1, 1, tzinfo=dt.UTC), modified_before=dt.datetime(9999, 12, 31, tzinfo=dt.UTC)
    )
    assert chunk_search(folder_id=corpus.folder.pk, query="revenue", filters=filters)


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_strings_through_the_api(auth_client, corpus, other_corpus, text):
    own = chunk_ids(corpus.folder)
    payloads = [
        {"query": text},
        {"query": "revenue", "filters": {"path_prefix": text}},
        {"query": "revenue", "filters": {"mime_types": [text]}},
        {"query": text, "mode": text},
        {"query": text, "k": text},
        {"query": "revenue", "filters": {"modified_after": text}},
    ]
    for payload in payloads:
        response = auth_client.post(f"/api/folders/{corpus.folder.pk}/search", payload, format="json")
        assert response.status_code in (200, 400), (payload, response.content[:300])
        if response.status_code == 200:
            assert {hit["chunk_id"] for hit in response.json()["results"]} <= own
        else:
            assert response.json()["detail"]


def test_hostile_folder_ids_in_the_url_are_404(auth_client, corpus):
    for path in ["0", "-1", "99999999999", "1%27%20OR%201=1", "1;DROP"]:
        response = auth_client.post(f"/api/folders/{path}/search", {"query": "revenue"}, format="json")
        assert response.status_code == 404

import json

import pytest
from django.conf import settings
from django.core.cache import cache
from django.core.management import call_command

from tests.support.search_corpus import CODE_QUESTION, QUESTION

pytestmark = pytest.mark.django_db


def _url(corpus):
    return f"/api/folders/{corpus.folder.pk}/search"


def test_search_returns_hits_and_timing(auth_client, corpus):
    response = auth_client.post(_url(corpus), {"query": CODE_QUESTION, "k": 3}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["took_ms"] >= 0 and len(body["results"]) == 3
    assert body["words_matched"] is True
    code = next(hit for hit in body["results"] if hit["chunk_id"] == corpus.chunks["code"].pk)
    assert code == {
        "chunk_id": corpus.chunks["code"].pk,
        "file_id": corpus.files["code"].pk,
        "file_name": "summary-2024.md",
        "path": "reports/finance/summary-2024.md",
        "text": corpus.chunks["code"].text,
        "location": {"chunk": 0},
        "vector_rank": None,
        "keyword_rank": 1,
        "score": pytest.approx(1 / (settings.SEARCH_RRF_K + 1)),  # first on the keyword side alone
        "distance": None,
        "keyword_score": pytest.approx(code["keyword_score"]),
    }
    assert code["keyword_score"] > 0  # the line above only says the key is there


def test_words_found_nowhere_are_said_so_beside_the_closest_passages(auth_client, corpus):
    hybrid = auth_client.post(_url(corpus), {"query": "xyzzyqwerty", "k": 3}, format="json").json()
    assert hybrid["results"] and hybrid["words_matched"] is False
    assert all(hit["keyword_rank"] is None for hit in hybrid["results"])
    vector = auth_client.post(_url(corpus), {"query": "xyzzyqwerty", "k": 3, "mode": "vector"}, format="json").json()
    assert vector["words_matched"] is None


def test_search_takes_mode_and_filters(auth_client, corpus):
    payload = {
        "query": QUESTION,
        "k": 10,
        "mode": "vector",
        "filters": {
            "path_prefix": "reports/",
            "mime_types": ["application/pdf"],
            "modified_after": "2024-10-01T00:00:00Z",
            "modified_before": "2025-01-01T00:00:00Z",
        },
    }
    response = auth_client.post(_url(corpus), payload, format="json")
    assert response.status_code == 200, response.json()
    assert [hit["chunk_id"] for hit in response.json()["results"]] == [corpus.chunks["near"].pk]


@pytest.mark.parametrize("query", ["", "   ", "\n"])
def test_blank_query_is_an_empty_list(auth_client, corpus, query):
    response = auth_client.post(_url(corpus), {"query": query}, format="json")
    assert response.status_code == 200
    assert response.json()["results"] == []


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"query": "x" * 2001}, "no more than 2000 characters"),
        ({"query": "revenue", "mode": "semantic"}, "is not a valid choice"),
        ({"query": "revenue", "k": 0}, "greater than or equal to 1"),
        ({"query": "revenue", "k": 101}, "less than or equal to 100"),
        ({"query": "revenue", "k": "ten"}, "valid integer"),
        ({}, "required"),
        ({"query": "revenue", "filters": {"mime_types": "text/plain"}}, "list"),
        ({"query": "revenue", "filters": {"modified_after": "yesterday"}}, "Datetime has wrong format"),
    ],
)
def test_bad_input_is_400_with_a_message(auth_client, corpus, payload, message):
    response = auth_client.post(_url(corpus), payload, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] and message in json.dumps(body)


def test_another_users_folder_is_404(other_client, corpus):
    response = other_client.post(_url(corpus), {"query": CODE_QUESTION}, format="json")
    assert response.status_code == 404


def test_anonymous_is_refused(api_client, corpus):
    assert api_client.post(_url(corpus), {"query": "x"}, format="json").status_code in (401, 403)


def test_search_is_throttled(auth_client, corpus, settings):
    cache.clear()
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "search": "2/min"},
    }
    from rest_framework.throttling import ScopedRateThrottle

    original = ScopedRateThrottle.THROTTLE_RATES
    ScopedRateThrottle.THROTTLE_RATES = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    try:
        statuses = [auth_client.post(_url(corpus), {"query": "x"}, format="json").status_code for _ in range(3)]
    finally:
        ScopedRateThrottle.THROTTLE_RATES = original
        cache.clear()
    assert statuses == [200, 200, 429]


def test_cli_prints_hits_and_json(corpus, capsys):
    call_command("search", str(corpus.folder.pk), CODE_QUESTION, "--k", "3", "--mode", "keyword")
    out = capsys.readouterr().out
    assert "reports/finance/summary-2024.md" in out and "1 hits in" in out
    call_command("search", str(corpus.folder.pk), CODE_QUESTION, "--json")
    body = json.loads(capsys.readouterr().out)
    assert corpus.chunks["code"].pk in [hit["chunk_id"] for hit in body["results"]]


def test_cli_reports_bad_arguments(corpus):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="k must be"):
        call_command("search", str(corpus.folder.pk), "x", "--k", "0")
    with pytest.raises(CommandError, match="does not exist"):
        call_command("search", "999999999", "x")

"""`GET /api/inbox/suggestions` filtered by several statuses: seed 002's `?status=pending,accepted`,
the parameter repeated, or both; an unknown status is a 400 naming it."""

from __future__ import annotations

import pytest

from apps.library.models import File
from apps.organize.models import OrganizationSuggestion
from apps.organize.services import file_suggest

pytestmark = pytest.mark.django_db

STATUSES = ["pending", "accepted", "rejected", "expired"]


@pytest.fixture
def by_status(sample) -> dict[str, int]:
    """A suggestion of each status (the inbox's files, suggested, then decided in the database)."""
    inbox = File.objects.filter(folder=sample.folder, path__startswith="inbox/").order_by("path")
    made = [s for s in (file_suggest(file_id=file.pk).suggestion for file in inbox) if s is not None]
    assert len(made) >= len(STATUSES), [s.source_path for s in made]
    for suggestion, status in zip(made, STATUSES, strict=False):
        OrganizationSuggestion.objects.filter(pk=suggestion.pk).update(status=status)
    return {status: suggestion.pk for suggestion, status in zip(made, STATUSES, strict=False)}


def listed(client, query) -> set[int]:
    response = client.get("/api/inbox/suggestions", query)
    assert response.status_code == 200, response.json()
    return {item["id"] for item in response.json()["results"]}


@pytest.mark.parametrize(
    "query",
    [
        {"status": "pending,accepted"},
        {"status": ["pending", "accepted"]},
        {"status": ["pending", "accepted,pending"]},
        {"status": " accepted , pending "},
    ],
)
def test_several_statuses_list_the_suggestions_of_any_of_them(auth_client, by_status, query):
    assert listed(auth_client, query) == {by_status["pending"], by_status["accepted"]}


def test_one_status_and_none_still_work_as_before(auth_client, by_status):
    assert listed(auth_client, {"status": "rejected"}) == {by_status["rejected"]}
    assert listed(auth_client, {}) == listed(auth_client, {"status": ""}) == set(by_status.values())


def test_a_pending_suggestion_whose_file_moved_since_stays_out_among_several(auth_client, by_status):
    pending = OrganizationSuggestion.objects.get(pk=by_status["pending"])
    File.objects.filter(pk=pending.file_id).update(path="elsewhere/moved.pdf")

    assert listed(auth_client, {"status": "pending,expired"}) == {by_status["expired"]}


@pytest.mark.parametrize("query", [{"status": "pending,maybe"}, {"status": ["accepted", "maybe"]}])
def test_an_unknown_status_is_400_naming_it(auth_client, by_status, query):
    response = auth_client.get("/api/inbox/suggestions", query)

    assert response.status_code == 400
    assert response.json()["errors"]["status"] == ['"maybe" is not a valid choice.']

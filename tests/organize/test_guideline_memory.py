""" "Shall I remember that?" answered: a remembered line is written to guideline.md through the
folder's source and the next similar file is suggested by it; "no" leaves the file alone."""

from __future__ import annotations

import pytest

from apps.chat.models import Message
from apps.organize.services import file_suggest
from tests.organize.test_learning import PAYSLIP, add_files, choose
from tests.support.inbox_runs import answer, send

pytestmark = pytest.mark.django_db

MONTHS = ["january", "february", "march", "april"]


@pytest.fixture
def proposed(sample, user, django_capture_on_commit_callbacks) -> Message:
    files = {f"inbox/payslip-{month}.txt": PAYSLIP.format(month=month) for month in MONTHS}
    add_files(sample, django_capture_on_commit_callbacks, files)
    with django_capture_on_commit_callbacks(execute=True):
        for month in MONTHS[:3]:
            choose(sample, user, f"inbox/payslip-{month}.txt", "work/payroll/")
    return Message.objects.get(metadata__has_key="guideline_proposal")


def test_remember_writes_the_line_and_the_next_similar_file_is_suggested_by_it(sample, proposed, auth_client):
    line = proposed.metadata["guideline_proposal"]["line"]
    guideline = sample.root / "guideline.md"
    before = guideline.read_text()

    response = auth_client.post(
        f"/api/inbox/guideline-proposals/{proposed.pk}/respond", {"action": "remember"}, format="json"
    )

    assert response.status_code == 200, response.json()
    assert response.json()["message"]["content"]["details"] == f"Added to guideline.md: {line}"
    assert response.json()["proposal"]["metadata"]["guideline_proposal"]["status"] == "remembered"
    assert guideline.read_text() == f"{before.rstrip()}\n\n{line}\n"
    line_number = guideline.read_text().splitlines().index(line) + 1
    suggestion = file_suggest(file_id=sample.file("inbox/payslip-april.txt").pk, on_demand=True).suggestion
    assert suggestion is not None and suggestion.target_folder == "work/payroll/"
    assert f'guideline.md line {line_number}: "Files named like payslip' in suggestion.reasoning

    again = auth_client.post(f"/api/inbox/guideline-proposals/{proposed.pk}/respond", {"action": "decline"})
    assert again.status_code == 409
    assert again.json()["detail"] == "This line was already remembered."


def test_a_stranger_gets_404_and_a_bad_action_400(sample, proposed, other_client, auth_client) -> None:
    url = f"/api/inbox/guideline-proposals/{proposed.pk}/respond"
    assert other_client.post(url, {"action": "remember"}).status_code == 404
    assert auth_client.post(url, {"action": "maybe"}).status_code == 400
    assert auth_client.post("/api/inbox/guideline-proposals/999999/respond", {"action": "remember"}).status_code == 404


def test_a_yes_typed_to_the_assistant_remembers_and_a_no_declines(sample, proposed) -> None:
    line = proposed.metadata["guideline_proposal"]["line"]

    run, _ = send(sample.folder, "yes", conversation=proposed.conversation)

    assert answer(run).content["text"] == f"Added to guideline.md: {line}"
    assert line in (sample.root / "guideline.md").read_text()
    proposed.refresh_from_db()
    assert proposed.metadata["guideline_proposal"]["status"] == "remembered"
    run, _ = send(sample.folder, "no", conversation=proposed.conversation)  # nothing is pending any more
    assert (
        answer(run).content["text"] == "There's nothing waiting for a yes or no right now. What would you like to do?"
    )


def test_no_leaves_guideline_md_as_it_was(sample, proposed) -> None:
    before = (sample.root / "guideline.md").read_text()
    run, _ = send(sample.folder, "no thanks", conversation=proposed.conversation)
    assert answer(run).content["text"] == "OK, guideline.md stays as it is."
    assert (sample.root / "guideline.md").read_text() == before

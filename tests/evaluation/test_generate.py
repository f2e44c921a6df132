"""*Generate* offline, on a small folder indexed for real: questions drawn from its headings, rows,
fields and sentences, each expecting the file it came from, with facts its file states; spread over
the files, one per passage, none twice, nothing from boilerplate; the same seed the same
questions. Saved through the create API and run, the offline answerer finds most of them.
Questions in the asker's language. Who may generate, and the refusals of bad input."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from rest_framework.test import APIClient

from apps.core.models import Preferences
from apps.evaluation.execution import evaluation_run_execute
from apps.evaluation.generation import evaluation_questions_generate
from apps.evaluation.scoring import fact_stated, normalised
from apps.library.models import File, FileStatus, Folder, FolderMembership
from tests.support.evaluation_folder import BOILERPLATE_FILES, GENERATION_FILES, evaluation_folder

pytestmark = pytest.mark.django_db


@pytest.fixture
def papers(user):
    with evaluation_folder(user, name="Household papers", files=GENERATION_FILES) as folder:
        yield folder


def generate(client, folder, **body):
    return client.post(f"/api/folders/{folder.pk}/evaluations/generate", body, format="json")


def generated(client, folder, **body) -> dict:
    response = generate(client, folder, **body)
    assert response.status_code == 200, response.json()
    return response.json()


def test_questions_come_from_the_folders_files_with_the_facts_they_state(auth_client, papers):
    body = generated(auth_client, papers, count=50, seed=7)

    questions = body["questions"]
    assert body["method"] == "offline" and body["seed"] == 7
    assert 10 <= len(questions) < 50
    assert body["notices"] == [f"The folder's passages gave {len(questions)} of the 50 questions asked."]
    indexed = set(File.objects.filter(folder=papers, status=FileStatus.INDEXED).values_list("path", flat=True))
    for question in questions:
        source = question["source"]
        assert question["expected_files"] == [source["file"]] and source["file"] in indexed, question
        assert source["by"] == "offline" and isinstance(source["location"]["chunk"], int)
        # Every fact is stated in the question's own file: the answer can be checked against it.
        said = normalised(GENERATION_FILES[source["file"]])
        assert all(fact_stated(fact=fact, normalised_text=said) for fact in question["expected_facts"]), question
    by_question = {question["question"]: question for question in questions}
    # A bill's row: its label asked about, its figure the fact.
    total = by_question["What is the total due in invoice-INV-20931.txt?"]
    assert total["expected_facts"] == ["2,300.00"] and total["source"]["excerpt"].startswith("Total due")
    # A field written in a sentence ("Federal income tax withheld: 12,300 dollars.").
    assert by_question["What is the federal income tax withheld in w2-2024.txt?"]["expected_facts"] == ["12,300"]
    # A heading, or its section's sentence; the section's date is the fact.
    (renewal,) = [question for question in questions if question["source"]["file"] == "home/lease.md"]
    assert renewal["expected_facts"] == ["1 November"] and renewal["source"]["location"]["section"] == "Lease renewal"
    assert renewal["question"] in (
        "What does lease.md say about lease renewal?",
        "According to lease.md, notice to end it is due by what date?",
    )
    # A table's record, known by its first cell.
    records = [question for question in questions if question["source"]["file"] == "finance/invoices.csv"]
    assert {question["question"].split(" of ")[1] for question in records} == {
        "INV-20917 in invoices.csv?",
        "INV-20935 in invoices.csv?",
    }
    assert not {question["source"]["file"] for question in questions} & BOILERPLATE_FILES


def test_questions_are_written_in_the_askers_language_or_else_the_one_they_chose(auth_client, papers, user):
    german = auth_client.post(
        f"/api/folders/{papers.pk}/evaluations/generate",
        {"count": 50, "seed": 7},
        format="json",
        HTTP_ACCEPT_LANGUAGE="de",
    ).json()["questions"]
    english = generated(auth_client, papers, count=50, seed=7)["questions"]
    Preferences.objects.create(user=user, language="fr")
    # No request (a worker's, a shell's): the language the person chose on their account page.
    french = evaluation_questions_generate(folder=papers, user=user, count=50, seed=7).questions

    asked = {question["question"]: question for question in german}
    total = asked["Welchen Wert hat „total due“ in invoice-INV-20931.txt?"]
    assert total["expected_facts"] == ["2,300.00"]  # a fact stays as its file writes it
    assert asked["Welchen Wert hat „federal income tax withheld“ in w2-2024.txt?"]["expected_facts"] == ["12,300"]
    assert not [question for question in asked if question.startswith(("What ", "According to "))]
    assert "What is the total due in invoice-INV-20931.txt?" in {question["question"] for question in english}
    assert "Quelle est la valeur de «\xa0total due\xa0» dans invoice-INV-20931.txt\xa0?" in {
        question.question for question in french
    }


def test_questions_are_spread_over_the_files_one_per_passage_none_twice(auth_client, papers):
    files_with_questions = len(GENERATION_FILES) - len(BOILERPLATE_FILES)

    few = generated(auth_client, papers, count=files_with_questions, seed=3)["questions"]
    many = generated(auth_client, papers, count=50, seed=3)["questions"]

    # One question of each file before any file gives a second.
    assert len({question["source"]["file"] for question in few}) == files_with_questions
    assert len({question["question"] for question in many}) == len(many)
    passages = Counter(
        (question["source"]["file"], question["source"]["location"]["chunk"], question["source"]["excerpt"])
        for question in many
    )
    assert passages.most_common(1)[0][1] == 1


def test_the_same_seed_gives_the_same_questions(auth_client, papers):
    first = generated(auth_client, papers, count=6, seed=11)
    again = generated(auth_client, papers, count=6, seed=11)
    others = [generated(auth_client, papers, count=6, seed=seed)["questions"] for seed in (1, 2, 3, 4)]
    unseeded = generated(auth_client, papers, count=6)

    assert again == first
    assert any(questions != first["questions"] for questions in others)
    assert 0 <= unseeded["seed"] < 2**31  # drawn, and said, so the draw can be repeated


def test_a_generated_set_saved_and_run_is_answered_from_its_files(auth_client, papers):
    questions = generated(auth_client, papers, count=12, seed=5)["questions"]
    kept = [{key: question[key] for key in ("question", "expected_files", "expected_facts")} for question in questions]

    created = auth_client.post(
        f"/api/folders/{papers.pk}/evaluations", {"name": "Generated", "questions": kept}, format="json"
    )
    assert created.status_code == 201, created.json()
    started = auth_client.post(f"/api/evaluations/{created.json()['id']}/runs", {}, format="json")
    run = evaluation_run_execute(run_id=started.json()["run_id"])

    assert run is not None
    run.refresh_from_db()
    assert run.status == "done" and run.metrics["questions"] == 12
    assert run.metrics["hit_at_5"] >= 0.75, run.metrics
    assert run.metrics["facts_found"] >= 0.6, run.metrics


@pytest.mark.parametrize(
    "body, said",
    [
        ({"count": 0}, '"count"'),
        ({"count": 51}, "less than or equal to 50"),
        ({"count": "many"}, "A valid integer is required"),
        ({"seed": -1}, '"seed"'),
    ],
    ids=["no question", "too many", "not a number", "negative seed"],
)
def test_a_bad_request_is_refused_saying_why(auth_client, papers, body, said):
    response = generate(auth_client, papers, **body)

    assert response.status_code == 400
    assert said in json.dumps(response.json()), response.json()


def test_a_folder_with_nothing_indexed_gives_no_questions(auth_client, user, tmp_path):
    empty = Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="Empty")

    response = generate(auth_client, empty)

    assert response.status_code == 400
    assert "No passage of this folder makes a question yet" in response.json()["detail"]


def test_editors_generate_viewers_may_not_and_strangers_find_nothing(papers, django_user_model):
    def client_for(role: str) -> APIClient:
        person = django_user_model.objects.create_user(username=f"{role}-person")
        if role != "stranger":
            FolderMembership.objects.create(folder=papers, user=person, role=role)
        client = APIClient()
        client.force_authenticate(user=person)
        return client

    editor, viewer, stranger = client_for("editor"), client_for("viewer"), client_for("stranger")

    assert generate(editor, papers, count=3).status_code == 200
    refused = generate(viewer, papers, count=3)
    assert refused.status_code == 403 and "Only an editor of this folder" in refused.json()["detail"]
    assert generate(stranger, papers, count=3).status_code == 404

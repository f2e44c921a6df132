"""The folder's rated answers (`GET /api/folders/{id}/feedback`): the list with its filters, the
counts per week by mode and model, who sees whose answers; and a rated answer's question turned into
an evaluation question in one step (`POST /api/messages/{id}/evaluation-question`), which a run
then asks."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.chat.models import Conversation, ConversationKind, Message
from apps.evaluation.execution import evaluation_run_execute
from apps.evaluation.models import EvaluationQuestion, EvaluationSet
from apps.evaluation.services import QuestionSpec, evaluation_set_create
from apps.library.models import Folder, FolderMembership
from tests.support.evaluation_folder import QUESTIONS
from tests.support.rated_answers import asked_and_rated

pytestmark = pytest.mark.django_db

RENEWAL = "When does the homeowner's policy with Northwind Mutual renew?"
EGGS = "How many eggs do the pancakes need?"
PASSPORT = "When is the passport renewal appointment at the consulate?"


def member(folder: Folder, django_user_model, role: str):
    person = django_user_model.objects.create_user(username=f"{role}-person")
    FolderMembership.objects.create(folder=folder, user=person, role=role)
    return person


def client_of(person) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=person)
    return client


@pytest.fixture
def rated(folder, user, django_user_model):
    """Three rated answers in the folder: the owner's (down, this week, by gpt-4o in agent mode),
    an editor's (up, three weeks ago) and a viewer's (down, with a comment); one answer unrated."""
    editor, viewer = member(folder, django_user_model, "editor"), member(folder, django_user_model, "viewer")
    answers = {
        "owner": asked_and_rated(
            folder=folder, user=user, question=RENEWAL, rating="down", model="gpt-4o", mode="agent"
        ),
        "editor": asked_and_rated(folder=folder, user=editor, question=EGGS, rating="up", rated_days_ago=21),
        "viewer": asked_and_rated(
            folder=folder, user=viewer, question=PASSPORT, rating="down", comment="It missed the time."
        ),
    }
    asked_and_rated(folder=folder, user=user, question="What is in the pancakes?", rating="up").feedback.all().delete()
    return {"answers": answers, "editor": editor, "viewer": viewer}


def feedback(client, folder, **filters):
    return client.get(f"/api/folders/{folder.pk}/feedback", filters)


def test_the_owner_reads_every_rated_answer_newest_first(auth_client, folder, rated):
    body = feedback(auth_client, folder).json()

    assert body["scope"] == "folder" and body["count"] == 3
    assert [item["question"] for item in body["results"]] == [PASSPORT, RENEWAL, EGGS]
    passport, renewal, eggs = body["results"]
    assert passport["rating"] == "down" and passport["comment"] == "It missed the time."
    assert passport["asked_by"] == "viewer-person" and passport["conversation_id"] is None  # not the owner's to open
    assert "March 3" in passport["answer"] and passport["cited_files"] == ["travel/passport.txt"]
    assert renewal["mode"] == "agent" and renewal["model"] == "gpt-4o" and renewal["in_sets"] == []
    assert renewal["conversation_id"] == rated["answers"]["owner"].conversation_id
    assert eggs["rating"] == "up" and eggs["mode"] == "standard"
    assert body["totals"] == {"up": 1, "down": 2}
    assert body["models"] == sorted({"gpt-4o", eggs["model"]})


def test_the_counts_go_by_week_mode_and_model(auth_client, folder, rated):
    weeks = feedback(auth_client, folder).json()["weeks"]

    this_week = (timezone.localdate() - dt.timedelta(days=timezone.localdate().weekday())).isoformat()
    then = timezone.localdate() - dt.timedelta(days=21)
    that_week = (then - dt.timedelta(days=then.weekday())).isoformat()
    standard_model = rated["answers"]["editor"].metadata["model"]
    assert weeks == [
        {"week": this_week, "mode": "agent", "model": "gpt-4o", "up": 0, "down": 1},
        {"week": this_week, "mode": "standard", "model": standard_model, "up": 0, "down": 1},
        {"week": that_week, "mode": "standard", "model": standard_model, "up": 1, "down": 0},
    ]


def test_the_filters_narrow_the_answers_and_the_counts(auth_client, folder, rated):
    since = (timezone.localdate() - dt.timedelta(days=7)).isoformat()

    down = feedback(auth_client, folder, rating="down").json()
    agent = feedback(auth_client, folder, mode="agent").json()
    model = feedback(auth_client, folder, model="gpt-4o").json()
    recent = feedback(auth_client, folder, since=since).json()

    assert [item["question"] for item in down["results"]] == [PASSPORT, RENEWAL]
    assert down["totals"] == {"up": 1, "down": 2}  # the counts keep both ratings, to compare them
    assert [item["question"] for item in agent["results"]] == [RENEWAL] and agent["totals"] == {"up": 0, "down": 1}
    assert [item["question"] for item in model["results"]] == [RENEWAL]
    assert [item["question"] for item in recent["results"]] == [PASSPORT, RENEWAL]
    assert len(recent["weeks"]) == 2 and recent["totals"] == {"up": 0, "down": 2}


@pytest.mark.parametrize(
    "filters, said",
    [({"rating": "meh"}, "rating"), ({"mode": "inbox"}, "mode"), ({"since": "last week"}, "since")],
    ids=["rating", "mode", "since"],
)
def test_a_bad_filter_is_refused_naming_it(auth_client, folder, filters, said):
    response = feedback(auth_client, folder, **filters)

    assert response.status_code == 400 and said in response.json()["errors"]


def test_a_viewer_reads_the_folders_counts_and_their_own_answers(folder, rated):
    body = feedback(client_of(rated["viewer"]), folder).json()

    assert body["scope"] == "mine"
    assert [item["question"] for item in body["results"]] == [PASSPORT]
    assert body["results"][0]["conversation_id"] == rated["answers"]["viewer"].conversation_id
    assert body["totals"] == {"up": 1, "down": 2} and len(body["weeks"]) == 3


def test_an_editor_reads_every_rated_answer(folder, rated):
    body = feedback(client_of(rated["editor"]), folder).json()

    assert body["scope"] == "folder" and body["count"] == 3


def test_answers_of_evaluation_runs_and_other_folders_are_not_feedback(auth_client, folder, rated, user):
    evaluation = Conversation.objects.create(owner=user, folder=folder, kind=ConversationKind.EVALUATION)
    answer = Message.objects.create(conversation=evaluation, role="agent", content={"text": "June 1"})
    answer.feedback.create(user=user, rating="down")

    assert feedback(auth_client, folder).json()["count"] == 3


def add(client, message: Message, **body):
    return client.post(f"/api/messages/{message.pk}/evaluation-question", body, format="json")


def test_a_thumbs_down_answer_becomes_a_question_a_run_asks(auth_client, folder, rated):
    owner_answer, viewer_answer = rated["answers"]["owner"], rated["answers"]["viewer"]

    first = add(auth_client, owner_answer, expected_file="insurance/home-policy.md", expected_facts=["June 1"])
    second = add(auth_client, viewer_answer, expected_file="travel/passport.txt")

    assert first.status_code == 201, first.json()
    assert first.json()["set_name"] == "From feedback" and first.json()["position"] == 1
    assert first.json()["question"] == RENEWAL
    assert second.json()["set_id"] == first.json()["set_id"] and second.json()["position"] == 2
    question = EvaluationQuestion.objects.get(pk=first.json()["question_id"])
    assert question.expected_files == ["insurance/home-policy.md"] and question.expected_facts == ["June 1"]
    assert question.source_message_id == owner_answer.pk
    listed = feedback(auth_client, folder, rating="down").json()["results"]
    assert [item["in_sets"] for item in listed] == [[{"id": first.json()["set_id"], "name": "From feedback"}]] * 2

    started = auth_client.post(f"/api/evaluations/{first.json()['set_id']}/runs", {}, format="json")
    evaluation_run_execute(run_id=started.json()["run_id"])
    results = auth_client.get(f"/api/evaluation-runs/{started.json()['run_id']}").json()["results"]
    assert [result["question"] for result in results] == [RENEWAL, PASSPORT]
    assert results[0]["hit_rank"] == 1 and results[0]["facts_found"] == ["June 1"]


def test_a_question_goes_into_a_chosen_set_after_its_questions(auth_client, folder, rated, user):
    others = [QuestionSpec(**question) for question in QUESTIONS if question["question"] != RENEWAL]
    chosen = evaluation_set_create(folder=folder, name="Household checks", questions=others, user=user)

    response = add(auth_client, rated["answers"]["owner"], expected_file="insurance/home-policy.md", set_id=chosen.pk)
    # The set asks the viewer's question already, written the same.
    again = add(auth_client, rated["answers"]["viewer"], expected_file="travel/passport.txt", set_id=chosen.pk)

    assert response.status_code == 201 and response.json()["set_id"] == chosen.pk
    assert response.json()["position"] == len(others) + 1
    assert again.status_code == 409 and "Household checks" in again.json()["detail"]
    assert not EvaluationSet.objects.filter(name="From feedback").exists()


def test_an_answer_the_folder_cannot_give_expects_no_file(auth_client, rated):
    response = add(auth_client, rated["answers"]["owner"], expected_file="")

    assert response.status_code == 201
    assert EvaluationQuestion.objects.get(pk=response.json()["question_id"]).expected_files == []


def test_bad_additions_are_refused_saying_why(auth_client, folder, rated, user, tmp_path):
    answer = rated["answers"]["owner"]
    elsewhere = Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="Elsewhere")
    other_set = EvaluationSet.objects.create(folder=elsewhere, name="Other", created_by=user)
    assert add(auth_client, answer, expected_file="insurance/home-policy.md").status_code == 201

    refusals = {
        "no file named": add(auth_client, answer),
        "not a file": add(auth_client, answer, expected_file="housing/lease.pdf"),
        "another folder's set": add(auth_client, answer, expected_file="", set_id=other_set.pk),
        "twice": add(auth_client, answer, expected_file="insurance/home-policy.md"),
    }

    said = {name: (response.status_code, json.dumps(response.json())) for name, response in refusals.items()}
    assert said["no file named"][0] == 400 and '"expected_file"' in said["no file named"][1]
    assert said["not a file"][0] == 400 and "'housing/lease.pdf' is not a file" in said["not a file"][1]
    assert (
        said["another folder's set"][0] == 400
        and f"No evaluation set {other_set.pk}" in said["another folder's set"][1]
    )
    assert said["twice"][0] == 409 and "already in the set \\u201cFrom feedback\\u201d" in said["twice"][1]
    assert EvaluationQuestion.objects.count() == 1


def test_who_may_add_a_rated_answer(folder, rated, django_user_model, user):
    answer = rated["answers"]["viewer"]
    stranger = django_user_model.objects.create_user(username="stranger")
    unrated = asked_and_rated(folder=folder, user=user, question="What do pancakes need?", rating="up")
    unrated.feedback.all().delete()

    by_viewer = add(client_of(rated["viewer"]), answer, expected_file="travel/passport.txt")
    by_stranger = add(client_of(stranger), answer, expected_file="travel/passport.txt")
    by_editor = add(client_of(rated["editor"]), answer, expected_file="travel/passport.txt")
    of_unrated = add(client_of(rated["editor"]), unrated, expected_file="recipes/pancakes.md")

    assert by_viewer.status_code == 403 and "Only an editor of this folder" in by_viewer.json()["detail"]
    assert by_stranger.status_code == 404 and by_stranger.json()["detail"] == "Rated answer not found."
    assert by_editor.status_code == 201
    assert of_unrated.status_code == 404

"""A run answers in the language it was asked in: for a person who chose none on their account page,
the request's Accept-Language, kept on the run for the Celery worker that writes the answer."""

from __future__ import annotations

import pytest

from apps.chat.models import AgentRun, Message, RunStatus
from apps.core.models import Preferences
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

DENTIST_QUESTION = "What is the name of my dentist?"  # nothing in the folder is about it


def asked(client, folder, **headers) -> AgentRun:
    response = client.post(f"/api/folders/{folder.pk}/chat", {"message": DENTIST_QUESTION}, format="json", **headers)
    assert response.status_code == 202, response.json()
    return AgentRun.objects.get(pk=response.json()["run_id"])


def answered(run: AgentRun) -> str:
    wait_for(
        lambda: AgentRun.objects.filter(pk=run.pk, status=RunStatus.COMPLETED).exists(),
        timeout=60,
        what="the worker to answer",
    )
    run.refresh_from_db()
    return str(Message.objects.get(pk=run.answer_id).content["text"])


def test_the_worker_writes_each_answer_in_the_language_its_request_asked_in(
    celery_worker_process, library, auth_client
):
    assert not Preferences.objects.filter(user=library.folder.owner).exists()

    german = asked(auth_client, library.folder, HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9,en;q=0.5")
    english = asked(auth_client, library.folder)

    assert (german.language, english.language) == ("de", "en")
    # The offline answerer's fixed sentences, written by the same worker process for both: what it
    # found nothing about (the words it looked for may vary), then what it searched.
    found_nothing, searched = answered(german).split("\n\n")
    assert found_nothing.startswith("Ich habe in diesem Ordner nichts über „") and found_nothing.endswith(" gefunden.")
    assert searched.startswith(f"Diesen Ordner nach „{DENTIST_QUESTION}“ durchsucht und ")
    found_nothing, searched = answered(english).split("\n\n")
    assert found_nothing.startswith('I found nothing in this folder about "')
    assert searched.startswith(f"Searched this folder for “{DENTIST_QUESTION}” and read ")


def test_a_chosen_language_wins_over_the_requests_and_a_regenerated_run_keeps_it(
    celery_worker_process, library, auth_client
):
    Preferences.objects.create(user=library.folder.owner, language="fr")
    first = asked(auth_client, library.folder, HTTP_ACCEPT_LANGUAGE="de")
    answered(first)

    # Asked again from an English client: the run asked in French stays French.
    response = auth_client.post(
        f"/api/conversations/{first.conversation_id}/regenerate", HTTP_ACCEPT_LANGUAGE="en", format="json"
    )
    assert response.status_code == 202, response.json()
    Preferences.objects.filter(user=library.folder.owner).update(language="")
    again = AgentRun.objects.get(pk=response.json()["run_id"])

    assert (first.language, again.language) == ("fr", "fr")
    assert answered(again).startswith("Je n\u2019ai rien trouvé dans ce dossier sur «\u00a0")

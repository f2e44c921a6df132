"""The state the screenshot tour shows (tests/web/test_screenshot_tour.py): a household's papers (a
copy of the bundled sample folder and a German utility bill, on disk, indexed for real), inbox
suggestions, the folder shared both ways, an invitation, an evaluation set run once, an API token,
a kept conversation of a removed folder and a removed file; and, per language, a question answered
in agent mode and rated. Everything runs in-process: the offline pipeline answers without a worker."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from apps.chat.controls import message_feedback_set
from apps.chat.models import Conversation, Message
from apps.chat.services import chat_start, run_execute
from apps.core.models import Preferences, TokenScope
from apps.core.tokens import personal_token_create
from apps.evaluation import enqueue as evaluation_enqueue
from apps.evaluation.execution import evaluation_run_execute
from apps.evaluation.services import QuestionSpec, evaluation_run_start, evaluation_set_create
from apps.library.indexing import folder_index
from apps.library.members import invitation_create
from apps.library.models import File, Folder, FolderMembership, UserQuota
from apps.organize.services import suggestion_create
from tests.support.sample_folder import SAMPLE
from tests.support.servers import BASE_DIR

FOLDER_NAME = "Household papers"
# A fixed place, so that the pictures show the same path each time they are refreshed.
ROOT = BASE_DIR / "var" / "folders" / "tour-household-papers"
REMOVED_FOLDER_NAME = "Old tax papers"
# The household lives in Germany: its landlord's bill is in German, and the German tour asks about it.
GERMAN_BILL = (
    "finance/Nebenkostenabrechnung-2024.md",
    "# Nebenkostenabrechnung 2024\n\n"
    "Harbor View Properties · Wohnung 3B · Abrechnungszeitraum 01.01.2024 bis 31.12.2024\n\n"
    "## Kosten\n"
    "- Heizung und Warmwasser: 1.124,60 EUR\n"
    "- Wasser und Abwasser: 386,20 EUR\n"
    "- Müllabfuhr: 148,00 EUR\n"
    "- Hausreinigung: 212,40 EUR\n\n"
    "## Ergebnis\n"
    "Ihre Vorauszahlungen betrugen 1.680,00 EUR, die Kosten 1.871,20 EUR.\n"
    "Die Nachzahlung der Abrechnung beträgt 191,20 EUR und ist bis zum 31.03.2025 zu überweisen.\n",
)
QUESTIONS = {
    "en": "How much federal tax was withheld in 2024?",
    "de": "Bis wann ist die Nachzahlung der Nebenkostenabrechnung 2024 zu überweisen?",
}
SEARCHES = {"en": "federal income tax withheld", "de": "Nachzahlung Heizung"}
RATINGS = {"en": ("up", ""), "de": ("up", "Genau das, was ich brauchte.")}
# OCR of the photo is the slowest file to index and adds nothing the other pages do not show.
LEFT_OUT = shutil.ignore_patterns("receipt-photo.png")

EVALUATION_QUESTIONS = [
    QuestionSpec(
        question="How much federal income tax was withheld on the 2024 W-2?",
        expected_files=["inbox/W2_2024.pdf"],
        expected_facts=["12,480.00"],
    ),
    QuestionSpec(
        question="When is the Q4-2024 estimated tax payment due?",
        expected_files=["taxes/2024-tax-checklist.md"],
        expected_facts=["15 January 2025"],
    ),
    QuestionSpec(
        question="How much is the rent per month?",
        expected_files=["finance/budget-2025.md"],
        expected_facts=["1,200 EUR"],
    ),
]


@dataclass
class Tour:
    user: AbstractBaseUser
    folder: Folder
    kept: Conversation  # of a removed folder
    removed_file_id: int
    invitation_token: str


def conversation_answered(*, tour: Tour, language: str) -> Conversation:
    """The language's question answered in agent mode by the offline pipeline, then rated. Its
    fixed sentences are in `language`: the answerer reads the asker's account language, and the
    tour's user keeps none (the browser's decides the pages), so it is set that long."""
    user = tour.user
    Preferences.objects.update_or_create(user_id=user.pk, defaults={"language": language})
    try:
        started = chat_start(user=user, folder=tour.folder, text=QUESTIONS[language], agent_mode=True)
        run = run_execute(run_id=started.pk)
    finally:
        Preferences.objects.filter(user_id=user.pk).delete()
    assert run.answer is not None, run.error
    rating, comment = RATINGS[language]
    message_feedback_set(user=user, message=run.answer, rating=rating, comment=comment)
    return run.conversation


def _people(django_user_model: Any, user: AbstractBaseUser, folder: Folder) -> str:
    """Bob edits alice's folder, a link for Chris waits; Sam shares his folder with her; Kim's
    invitation link is the one she opens (its token)."""
    bob, sam, kim = (
        django_user_model.objects.create_user(username=name, password=f"{name}-password")
        for name in ("bob", "sam", "kim")
    )
    FolderMembership.objects.create(folder=folder, user=bob, role="editor")
    invitation_create(folder=folder, actor=user, role="viewer", invitee="chris@example.com")
    lisbon = Folder.objects.create(
        owner=sam, source="local", external_id="/srv/sam/lisbon-2025", name="Lisbon trip 2025", status="ready"
    )
    FolderMembership.objects.create(folder=lisbon, user=user, role="viewer")
    recipes = Folder.objects.create(owner=kim, source="local", external_id="/srv/kim/recipes", name="Family recipes")
    return invitation_create(folder=recipes, actor=kim, role="viewer", anyone_with_link=True)[1]


def _inbox(folder: Folder) -> None:
    suggestion_create(
        file=File.objects.get(folder=folder, path="inbox/W2_2024.pdf"),
        target="taxes/",
        reasoning="A W-2 always goes to taxes/, even when it arrives from work (guideline.md).",
        confidence=0.94,
        alternatives=[{"folder": "work/", "reasoning": "It comes from the employer."}],
    )
    suggestion_create(
        file=File.objects.get(folder=folder, path="inbox/invoice-INV-20931.txt"),
        target="finance/",
        reasoning="Invoices go to finance/, named by their code.",
        confidence=0.81,
    )


def _evaluation(user: AbstractBaseUser, folder: Folder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluation_enqueue, "task_send", lambda name, *, args: None)  # executed here instead
    checks = evaluation_set_create(folder=folder, name="Household checks", questions=EVALUATION_QUESTIONS, user=user)
    evaluation_run_execute(run_id=evaluation_run_start(evaluation_set=checks, user=user).pk)


def _kept_conversation(user: AbstractBaseUser) -> Conversation:
    kept = Conversation.objects.create(
        owner=user, folder=None, folder_name=REMOVED_FOLDER_NAME, title="2023 refund", last_activity_at=timezone.now()
    )
    Message.objects.create(conversation=kept, role="user", content={"text": "How big was the 2023 refund?"})
    Message.objects.create(
        conversation=kept, role="agent", content={"text": "The 2023 federal refund was 1,140 dollars.", "citations": []}
    )
    return kept


def _removed_file_id(folder: Folder) -> int:
    gone = File.objects.create(folder=folder, external_id="old/receipt.txt", path="old/receipt.txt", name="receipt.txt")
    gone_id = gone.pk
    gone.delete()  # what a sync does once the file is gone at its source
    return gone_id


@contextmanager
def tour_state(*, user: AbstractBaseUser, django_user_model: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tour]:
    shutil.rmtree(ROOT, ignore_errors=True)  # an interrupted run's
    shutil.copytree(SAMPLE, ROOT, ignore=LEFT_OUT)
    (ROOT / GERMAN_BILL[0]).write_text(GERMAN_BILL[1])
    # Suggestions and syncs come from here, not from the digest hook's tasks.
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", lambda *args: None)
    monkeypatch.setattr("apps.library.enqueue.sync_folder", lambda folder_id: None)
    try:
        UserQuota.objects.create(user=user, folders=5, files=2000)
        folder = Folder.objects.create(
            owner=user, source="local", external_id=str(ROOT), name=FOLDER_NAME, sync_interval_seconds=86_400
        )
        folder_index(folder_id=folder.pk, inline=True)
        folder.refresh_from_db()
        token = _people(django_user_model, user, folder)
        _inbox(folder)
        _evaluation(user, folder, monkeypatch)
        personal_token_create(
            user=user, name="Laptop backup script", scopes=[TokenScope.READ, TokenScope.SEARCH], expires_in_days=90
        )
        yield Tour(
            user=user,
            folder=folder,
            kept=_kept_conversation(user),
            removed_file_id=_removed_file_id(folder),
            invitation_token=token,
        )
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)

"""Decisions that teach, on indexed files: similar files' confidence moves, a declined folder stops
being offered for files just like that one, and consistent acceptances propose a guideline line."""

from __future__ import annotations

import pytest

from apps.chat.models import Message
from apps.library.indexing import folder_index
from apps.organize.decisions import suggestion_respond
from apps.organize.models import OrganizationDecision
from apps.organize.selectors import file_for_organize, organize_inputs
from apps.organize.services import file_suggest
from tests.support.sample_folder import drop

pytestmark = pytest.mark.django_db

W2_COPY = (
    "Form W-2 Wage and Tax Statement {year}. Employer: Contoso Ltd, 1 Harbor Way. Employee: Alex Morgan. "
    "Box 1 wages, tips and other compensation. Box 2 federal income tax withheld. Copy B, to be filed with "
    "the employee's federal tax return."
)
PAYSLIP = "Payslip {month} 2024. Employer Contoso Ltd. Gross pay 6,845.00. Net pay 4,912.33. Pension 342.25."


def add_files(sample, capture, files: dict[str, str]) -> None:
    for path, text in files.items():
        drop(sample.root, path, text)
    with capture(execute=True):
        folder_index(folder_id=sample.folder.pk, inline=True)


def propose(sample, path: str):
    return organize_inputs(file=file_for_organize(file_id=sample.file(path).pk)).propose()


def choose(sample, user, path: str, target: str) -> None:
    suggestion = file_suggest(file_id=sample.file(path).pk, on_demand=True).suggestion
    assert suggestion is not None
    action = "accept" if suggestion.target_folder == target else "choose"
    suggestion_respond(
        suggestion_id=suggestion.pk,
        owner_id=user.pk,
        action=action,
        target_folder=target if action == "choose" else None,
    )


def test_a_folder_chosen_for_similar_files_gains_confidence(sample, user, django_capture_on_commit_callbacks):
    months = ["january", "february", "march"]
    add_files(
        sample, django_capture_on_commit_callbacks, {f"inbox/payslip-{m}.txt": PAYSLIP.format(month=m) for m in months}
    )
    before = propose(sample, "inbox/payslip-march.txt")

    choose(sample, user, "inbox/payslip-january.txt", "work/payroll/")
    choose(sample, user, "inbox/payslip-february.txt", "work/payroll/")
    after = propose(sample, "inbox/payslip-march.txt")

    assert before.best is None or before.best.folder != "work/payroll/"
    assert after.best is not None and after.best.folder == "work/payroll/"
    assert "You put 2 similar files here before." in after.best.reasoning
    assert after.best.confidence > (before.best.confidence if before.best else 0)


def test_a_folder_declined_for_a_file_just_like_this_is_not_offered(sample, user, django_capture_on_commit_callbacks):
    add_files(
        sample,
        django_capture_on_commit_callbacks,
        {"inbox/W2_2022.txt": W2_COPY.format(year=2022), "inbox/W2_2021.txt": W2_COPY.format(year=2021)},
    )
    first = file_suggest(file_id=sample.file("inbox/W2_2022.txt").pk, on_demand=True).suggestion
    assert first is not None and first.target_folder == "taxes/"

    suggestion_respond(suggestion_id=first.pk, owner_id=user.pk, action="reject")
    twin = propose(sample, "inbox/W2_2021.txt")

    assert twin.not_offered.get("taxes/") == "the user declined it for a file just like this one"
    assert twin.best is None or twin.best.folder != "taxes/"


def test_three_consistent_acceptances_make_the_organize_agent_propose_a_guideline_line(
    sample, user, django_capture_on_commit_callbacks
):
    months = ["january", "february", "march", "april"]
    add_files(
        sample, django_capture_on_commit_callbacks, {f"inbox/payslip-{m}.txt": PAYSLIP.format(month=m) for m in months}
    )

    for month in months[:2]:
        choose(sample, user, f"inbox/payslip-{month}.txt", "work/payroll/")
    assert not Message.objects.filter(metadata__has_key="guideline_proposal").exists()
    choose(sample, user, "inbox/payslip-march.txt", "work/payroll/")
    choose(sample, user, "inbox/payslip-april.txt", "work/payroll/")

    (proposal,) = Message.objects.filter(metadata__has_key="guideline_proposal")
    line = proposal.metadata["guideline_proposal"]["line"]
    # Proposed once, at the third acceptance: the fourth, same folder and pattern, does not repeat it.
    assert line == (
        "- Files named like payslip (e.g. payslip-february.txt, payslip-january.txt, payslip-march.txt) "
        "go in `work/payroll/`."
    )
    assert line in proposal.content["text"] and proposal.metadata["agent"] == "organize"
    assert proposal.conversation.kind == "inbox" and proposal.conversation.folder_id == sample.folder.pk
    assert line not in (sample.root / "guideline.md").read_text()  # proposed, never written
    assert OrganizationDecision.objects.filter(final_target="work/payroll/").count() == 4

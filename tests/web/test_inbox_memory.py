"""The inbox with a real worker: one stream for any number of folders, a remembered guideline line
that the next file's suggestion follows, and a file left unsuggested getting a card on demand."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from apps.library.indexing import folder_index
from apps.library.models import File, Folder
from apps.library.services import folder_sync_enqueue
from apps.organize.decisions import suggestion_respond
from apps.organize.models import OrganizationSettings
from apps.organize.services import file_suggest
from tests.support.browser import log_in
from tests.support.sample_folder import SAMPLE
from tests.support.servers import BASE_DIR

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

W2 = "Form W-2 Wage and Tax Statement 2025. Employer: Contoso Ltd. Box 2 federal income tax withheld 13,100."
PAYSLIP = "Payslip {month} 2024. Employer Contoso Ltd. Gross pay 6,845.00. Net pay 4,912.33. Pension 342.25."
MONTHS = ["january", "february", "march"]


@pytest.fixture
def sample_copy(user, monkeypatch) -> Iterator[tuple[Folder, Path]]:
    """The sample folder on disk, indexed here without suggestions: its inbox files wait unsuggested."""
    root = BASE_DIR / "var" / "folders" / f"web-memory-{uuid.uuid4().hex[:8]}"
    shutil.copytree(SAMPLE, root)
    for month in MONTHS:
        (root / "inbox" / f"payslip-{month}.txt").write_text(PAYSLIP.format(month=month))
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", lambda *args: None)
    folder = Folder.objects.create(owner=user, source="local", external_id=str(root), name="Sample")
    folder_index(folder_id=folder.pk, inline=True)
    # Low enough that the worker's suggestions are shown whatever the hash embedder scores.
    OrganizationSettings.objects.create(owner=user, suggest_threshold=0.3, auto_move_threshold=0.99)
    yield folder, root
    shutil.rmtree(root, ignore_errors=True)


def test_a_sixth_folders_suggestion_arrives_live_and_a_waiting_file_gets_one_on_demand(
    page: Page, user, sample_copy, celery_worker_process
) -> None:
    for n in range(5):  # created first: the page once followed only the first four folders' streams
        Folder.objects.create(owner=user, source="local", external_id=f"/srv/none-{n}", name=f"Folder {n}")
    folder, root = sample_copy
    assert Folder.objects.filter(owner=user).count() == 6
    log_in(page)
    page.goto("/inbox/")
    waiting = page.get_by_role("article", name="Waiting in the inbox: W2_2024.pdf")
    expect(waiting).to_contain_text("No suggestion: No folder fitted it well enough to suggest one.")

    (root / "inbox" / "W2_2025.txt").write_text(W2)
    folder_sync_enqueue(folder=folder)  # the worker syncs, indexes, then suggests

    live = page.locator(".file-card").filter(has_text="W2_2025.txt")
    expect(live).to_contain_text("Move to taxes/", timeout=60_000)

    waiting.get_by_role("button", name="Suggest a folder").click()
    card = page.locator(".file-card").filter(has_text="W2_2024.pdf")
    expect(card).to_contain_text("Move to taxes/")
    expect(waiting).to_have_count(0)


def test_a_remembered_guideline_line_is_used_for_the_next_file(
    page: Page, user, sample_copy, celery_worker_process
) -> None:
    folder, root = sample_copy
    for month in MONTHS:
        file = File.objects.get(folder=folder, path=f"inbox/payslip-{month}.txt")
        suggestion = file_suggest(file_id=file.pk, on_demand=True).suggestion
        assert suggestion is not None
        suggestion_respond(
            suggestion_id=suggestion.pk, owner_id=user.pk, action="choose", target_folder="work/payroll/"
        )
    log_in(page)
    page.goto("/inbox/")

    proposal = page.get_by_role("article", name="Guideline line proposed")
    expect(proposal).to_contain_text("Shall I remember that?")
    expect(proposal).to_contain_text("go in `work/payroll/`.")
    proposal.get_by_role("button", name="Remember").click()
    expect(proposal.get_by_role("status")).to_contain_text("Added to guideline.md: - Files named like payslip")
    assert "go in `work/payroll/`." in (root / "guideline.md").read_text()

    (root / "inbox" / "payslip-april.txt").write_text(PAYSLIP.format(month="april"))
    folder_sync_enqueue(folder=folder)

    card = page.locator(".file-card").filter(has_text="payslip-april.txt")
    expect(card).to_contain_text("Move to work/payroll/", timeout=60_000)
    expect(card).to_contain_text("guideline.md line")
    expect(card).to_contain_text("Files named like payslip")

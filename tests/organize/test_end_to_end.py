"""Done when: a file dropped into the inbox of a local folder gets a suggestion through the real
worker chain (sync -> index_files -> suggest_organization) with no keys; accepting moves it on disk
and in the index (same chunks); undo puts it back; a rejected suggestion does not come back."""

from __future__ import annotations

import pytest

from apps.library.models import Chunk, File
from apps.organize.models import OrganizationSuggestion
from tests.support.sample_folder import copy_sample, drop
from tests.support.waiting import wait_for
from workers.organize import suggest_organization

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DROPPED = "inbox/1099-INT_2024.txt"
# The worker chain (sync, index, OCR, suggest) on a busy machine.
WAIT_SECONDS = 90
FORM_1099 = (
    "Form 1099-INT Interest Income 2024\n\nPayer: Harbor Savings Bank\nRecipient: Alex Morgan\n"
    "Box 1 Interest income: 412.10\nBox 4 Federal income tax withheld: 0.00\n"
    "Keep this form with your tax return.\n"
)


def chunk_ids(file_id: int) -> list[int]:
    return sorted(Chunk.objects.filter(file_id=file_id).values_list("id", flat=True))


def test_drop_suggest_accept_undo_and_reject_through_the_worker(celery_worker_process, tmp_path, settings, auth_client):
    root = copy_sample(tmp_path, settings)
    connected = auth_client.post("/api/folders", {"source": "local", "path": str(root)}, format="json")
    assert connected.status_code == 201, connected.json()
    folder_id = connected.json()["id"]
    initial = wait_for(
        lambda: OrganizationSuggestion.objects.filter(folder_id=folder_id).count() == 4,
        what="suggestions for the sample's four inbox files (the receipt photo is read by OCR)",
        timeout=WAIT_SECONDS,
    )
    assert initial

    drop(root, DROPPED, FORM_1099)
    assert auth_client.post(f"/api/folders/{folder_id}/sync").status_code == 202
    suggestion = wait_for(
        lambda: OrganizationSuggestion.objects.filter(folder_id=folder_id, source_path=DROPPED).first(),
        what="a suggestion for the dropped file",
        timeout=WAIT_SECONDS,
    )

    assert suggestion.status == "pending" and suggestion.target_folder == "taxes/"
    assert suggestion.confidence >= 0.8 and "1099" in suggestion.reasoning
    assert suggestion.message is not None and suggestion.message.type == "suggestion"
    listed = auth_client.get("/api/inbox/suggestions", {"status": "pending", "folder_id": folder_id}).json()
    assert suggestion.pk in [item["id"] for item in listed["results"]]

    chunks = chunk_ids(suggestion.file_id)
    accepted = auth_client.post(f"/api/inbox/suggestions/{suggestion.pk}/respond", {"action": "accept"}, format="json")
    assert accepted.status_code == 200, accepted.json()
    assert not (root / DROPPED).exists() and (root / "taxes/1099-INT_2024.txt").read_text() == FORM_1099
    moved = File.objects.get(pk=suggestion.file_id)
    assert (moved.path, moved.status) == ("taxes/1099-INT_2024.txt", "indexed")
    assert chunk_ids(moved.pk) == chunks

    undone = auth_client.post(f"/api/inbox/moves/{accepted.json()['move']['id']}/undo")
    assert undone.status_code == 200, undone.json()
    assert (root / DROPPED).read_text() == FORM_1099 and not (root / "taxes/1099-INT_2024.txt").exists()
    assert File.objects.get(pk=moved.pk).path == DROPPED and chunk_ids(moved.pk) == chunks

    invoice = OrganizationSuggestion.objects.get(folder_id=folder_id, source_path="inbox/invoice-INV-20931.txt")
    rejected = auth_client.post(f"/api/inbox/suggestions/{invoice.pk}/respond", {"action": "reject"}, format="json")
    assert rejected.status_code == 200 and rejected.json()["suggestion"]["status"] == "rejected"
    invoice.refresh_from_db()
    # The invoice changes: the next sync re-indexes it, and the hook runs again through the worker.
    with (root / "inbox/invoice-INV-20931.txt").open("a") as handle:
        handle.write("\nPayment reminder sent on 2025-01-20.\n")
    assert auth_client.post(f"/api/folders/{folder_id}/sync").status_code == 202
    wait_for(
        lambda: (
            File.objects.filter(pk=invoice.file_id, status="indexed", chunk_count__gt=0)
            .exclude(indexed_at__lte=invoice.decided_at)
            .exists()
        ),
        what="the changed invoice re-indexed",
        timeout=WAIT_SECONDS,
    )
    outcome = suggest_organization.apply_async(args=[invoice.file_id]).get(timeout=60)

    assert outcome.startswith("no suggestion for inbox/invoice-INV-20931.txt")
    assert not OrganizationSuggestion.objects.filter(
        file_id=invoice.file_id, status="pending", target_folder="finance/"
    ).exists()
    assert (root / "inbox/invoice-INV-20931.txt").is_file()

"""Choosing and bulk (issue #30): the folder tree a file may move to, searchable by name, and
"Accept all above N%", through the API with its access rules."""

from __future__ import annotations

import pytest

from apps.library.models import FolderMembership
from apps.organize.models import OrganizationSuggestion
from apps.organize.services import suggestion_create

pytestmark = pytest.mark.django_db

W2 = "inbox/W2_2024.pdf"
LEASE = "inbox/lease-renewal-2025.docx"
INVOICE = "inbox/invoice-INV-20931.txt"


def test_the_folder_tree_lists_move_targets_and_narrows_by_name(auth_client, sample):
    response = auth_client.get(f"/api/inbox/folders/{sample.folder.pk}/tree")

    assert response.status_code == 200
    folders = response.json()["folders"]
    assert [folder["path"] for folder in folders] == ["finance/", "personal/", "taxes/", "work/"]
    assert {folder["name"] for folder in folders} == {"finance", "personal", "taxes", "work"}
    assert all(folder["depth"] == 1 and folder["files"] > 0 for folder in folders)
    narrowed = auth_client.get(f"/api/inbox/folders/{sample.folder.pk}/tree", {"q": "TAX"}).json()["folders"]
    assert [folder["path"] for folder in narrowed] == ["taxes/"]
    assert auth_client.get(f"/api/inbox/folders/{sample.folder.pk}/tree", {"q": "garden"}).json()["folders"] == []


def test_the_folder_tree_is_404_to_strangers_and_403_to_viewers(other_client, other_user, sample):
    assert other_client.get(f"/api/inbox/folders/{sample.folder.pk}/tree").status_code == 404
    FolderMembership.objects.create(folder=sample.folder, user=other_user, role="viewer")
    forbidden = other_client.get(f"/api/inbox/folders/{sample.folder.pk}/tree")
    assert forbidden.status_code == 403 and forbidden.json()["detail"]


def test_accept_all_above_moves_those_at_least_that_sure_and_reports_what_could_not_move(auth_client, sample):
    sure = suggestion_create(file=sample.file(W2), target="taxes/", reasoning="A W-2.", confidence=0.95)
    blocked = suggestion_create(file=sample.file(LEASE), target="personal/", reasoning="A lease.", confidence=0.9)
    unsure = suggestion_create(file=sample.file(INVOICE), target="finance/", reasoning="Maybe.", confidence=0.6)
    (sample.root / "personal/lease-renewal-2025.docx").write_text("already here")  # the place is taken

    response = auth_client.post(
        "/api/inbox/suggestions/accept-all", {"min_confidence": 0.8, "folder_id": sample.folder.pk}, format="json"
    )

    assert response.status_code == 200, response.json()
    body = response.json()
    assert [move["to_path"] for move in body["moves"]] == ["taxes/W2_2024.pdf"]
    (failed,) = body["failed"]
    assert failed["suggestion_id"] == blocked.pk and failed["path"] == LEASE and failed["reason"]
    assert (sample.root / "taxes/W2_2024.pdf").is_file() and (sample.root / LEASE).is_file()
    statuses = dict(OrganizationSuggestion.objects.values_list("pk", "status"))
    assert (statuses[sure.pk], statuses[blocked.pk], statuses[unsure.pk]) == ("accepted", "pending", "pending")


def test_accept_all_refuses_bad_input_and_other_peoples_folders(auth_client, other_client, sample):
    bad = auth_client.post("/api/inbox/suggestions/accept-all", {"min_confidence": 1.5}, format="json")
    assert bad.status_code == 400 and "min_confidence" in bad.json()["errors"]
    suggestion_create(file=sample.file(W2), target="taxes/", reasoning="A W-2.", confidence=0.95)
    stranger = other_client.post(
        "/api/inbox/suggestions/accept-all", {"min_confidence": 0, "folder_id": sample.folder.pk}, format="json"
    )
    assert stranger.status_code == 404
    everything = other_client.post("/api/inbox/suggestions/accept-all", {"min_confidence": 0}, format="json")
    assert everything.json() == {"moves": [], "failed": []}
    assert (sample.root / W2).is_file()


def test_a_suggestion_whose_file_moved_under_a_sync_is_no_longer_pending(auth_client, sample):
    suggestion_create(file=sample.file(W2), target="taxes/", reasoning="A W-2.", confidence=0.95)
    sample.folder.files.filter(path=W2).update(path="work/W2_2024.pdf")  # as a sync records a move

    listed = auth_client.get("/api/inbox/suggestions", {"status": "pending"}).json()["results"]

    assert listed == []

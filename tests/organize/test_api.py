"""The organize endpoints on a local copy of the sample folder: moves on disk and in the index,
conflicts that change nothing, undo, settings, and one user never reaching another's objects."""

from __future__ import annotations

import pytest

from apps.core.events import folder_channel
from apps.library.models import File
from apps.library.sync import folder_sync
from apps.organize import decisions
from apps.organize.models import FileMove, OrganizationDecision, OrganizationSuggestion
from apps.organize.services import file_suggest

pytestmark = pytest.mark.django_db

W2 = "inbox/W2_2024.pdf"


@pytest.fixture
def w2_suggestion(sample) -> OrganizationSuggestion:
    suggestion = file_suggest(file_id=sample.file(W2).pk).suggestion
    assert suggestion is not None and suggestion.target_folder == "taxes/"
    return suggestion


def respond(client, suggestion, **body):
    return client.post(f"/api/inbox/suggestions/{suggestion.pk}/respond", body, format="json")


def snapshot(sample, path: str) -> tuple:
    file = sample.file(path)
    return (file.pk, file.path, file.external_id, file.checksum, file.indexed_checksum, sample.chunk_ids(path))


def test_pending_suggestions_are_listed_and_filtered(auth_client, sample, w2_suggestion):
    response = auth_client.get("/api/inbox/suggestions", {"status": "pending", "folder_id": sample.folder.pk})

    assert response.status_code == 200
    (item,) = response.json()["results"]
    assert item["id"] == w2_suggestion.pk
    assert item["source_path"] == W2 and item["file_name"] == "W2_2024.pdf" and item["target_folder"] == "taxes/"
    assert item["message_id"] == w2_suggestion.message_id and item["conversation_id"]
    assert auth_client.get("/api/inbox/suggestions", {"status": "accepted"}).json()["results"] == []
    bad = auth_client.get("/api/inbox/suggestions", {"status": "maybe"})
    assert bad.status_code == 400 and "status" in bad.json()["errors"]


def test_accept_moves_the_file_on_disk_and_in_the_index_keeping_its_chunks(auth_client, sample, w2_suggestion):
    before = snapshot(sample, W2)

    response = respond(auth_client, w2_suggestion, action="accept")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["suggestion"]["status"] == "accepted"
    assert body["move"]["from_path"] == W2 and body["move"]["to_path"] == "taxes/W2_2024.pdf"
    assert body["message"]["type"] == "action_result" and body["message"]["content"]["success"] is True
    assert not (sample.root / W2).exists() and (sample.root / "taxes/W2_2024.pdf").is_file()
    file_id, _, _, checksum, indexed, chunks = before
    assert snapshot(sample, "taxes/W2_2024.pdf") == (
        file_id,
        "taxes/W2_2024.pdf",
        "taxes/W2_2024.pdf",
        checksum,
        indexed,
        chunks,
    )
    decision = OrganizationDecision.objects.get()
    assert (decision.action, decision.final_target) == ("accept", "taxes/")
    # The next sync sees nothing to do: no re-index, no delete + add.
    log = folder_sync(folder_id=sample.folder.pk)
    assert log is not None and (log.added, log.modified, log.deleted) == (0, 0, 0)
    assert snapshot(sample, "taxes/W2_2024.pdf")[5] == chunks


def test_choose_moves_to_the_folder_picked_creating_it(auth_client, sample, w2_suggestion):
    chunks = sample.chunk_ids(W2)

    response = respond(auth_client, w2_suggestion, action="choose", target_folder="taxes/2024")

    assert response.status_code == 200, response.json()
    assert response.json()["move"]["to_path"] == "taxes/2024/W2_2024.pdf"
    assert (sample.root / "taxes/2024/W2_2024.pdf").is_file()
    assert sample.chunk_ids("taxes/2024/W2_2024.pdf") == chunks
    decision = OrganizationDecision.objects.get()
    assert (decision.action, decision.suggested_target, decision.final_target) == ("choose", "taxes/", "taxes/2024/")


def test_reject_keeps_the_file_and_a_second_answer_is_a_conflict(auth_client, sample, w2_suggestion):
    before = snapshot(sample, W2)

    response = respond(auth_client, w2_suggestion, action="reject")
    again = respond(auth_client, w2_suggestion, action="accept")

    assert response.status_code == 200 and response.json()["suggestion"]["status"] == "rejected"
    assert response.json()["move"] is None
    assert snapshot(sample, W2) == before and (sample.root / W2).is_file()
    assert again.status_code == 409 and again.json()["detail"] == "This suggestion was already rejected."


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda root: (root / "taxes/W2_2024.pdf").write_bytes(b"another W-2"), "already exists"),
        (lambda root: (root / W2).write_bytes(b"%PDF-1.4 edited since"), "changed since it was indexed"),
        (lambda root: (root / W2).unlink(), "is gone from the folder"),
    ],
    ids=["target-exists", "file-changed", "file-gone"],
)
def test_conflicts_are_409_with_a_clear_message_and_change_nothing(auth_client, sample, w2_suggestion, change, message):
    before = snapshot(sample, W2)
    change(sample.root)

    response = respond(auth_client, w2_suggestion, action="accept")

    assert response.status_code == 409
    assert message in response.json()["detail"]
    assert snapshot(sample, W2) == before
    w2_suggestion.refresh_from_db()
    assert w2_suggestion.status == "pending"
    assert not FileMove.objects.exists() and not OrganizationDecision.objects.exists()


def test_a_file_moved_or_reindexing_since_is_a_conflict(auth_client, sample, w2_suggestion):
    File.objects.filter(pk=w2_suggestion.file_id).update(status="pending", checksum="new")
    assert "being re-indexed" in respond(auth_client, w2_suggestion, action="accept").json()["detail"]

    File.objects.filter(pk=w2_suggestion.file_id).update(status="indexed", checksum=snapshot(sample, W2)[4])
    File.objects.filter(pk=w2_suggestion.file_id).update(path="inbox/renamed.pdf")
    response = respond(auth_client, w2_suggestion, action="accept")
    assert response.status_code == 409 and "was moved or renamed since" in response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field", "problem"),
    [
        ({"action": "choose", "target_folder": "../outside"}, "target_folder", "'..'"),
        ({"action": "choose", "target_folder": "taxes/../../etc"}, "target_folder", "'..'"),
        ({"action": "choose", "target_folder": "/etc"}, "target_folder", "absolute"),
        ({"action": "choose", "target_folder": "taxes\x00"}, "target_folder", "Null characters"),
        ({"action": "choose"}, "target_folder", "Required when the action is choose."),
        ({"action": "accept", "target_folder": "work/"}, "target_folder", "Only used when the action is choose."),
        ({"action": "move"}, "action", "not a valid choice"),
        ({}, "action", "required"),
    ],
)
def test_bad_responses_are_400_with_the_reason(auth_client, sample, w2_suggestion, body, field, problem):
    response = respond(auth_client, w2_suggestion, **body)

    assert response.status_code == 400
    assert problem in str(response.json()["errors"][field])
    assert (sample.root / W2).is_file()


def test_choosing_the_folder_the_file_is_in_is_400(auth_client, w2_suggestion):
    response = respond(auth_client, w2_suggestion, action="choose", target_folder="inbox/")

    assert response.status_code == 400 and response.json()["detail"] == "inbox/W2_2024.pdf is already there."


def test_undo_puts_the_file_back_once(auth_client, sample, w2_suggestion):
    before = snapshot(sample, W2)
    move_id = respond(auth_client, w2_suggestion, action="accept").json()["move"]["id"]

    response = auth_client.post(f"/api/inbox/moves/{move_id}/undo")
    again = auth_client.post(f"/api/inbox/moves/{move_id}/undo")

    assert response.status_code == 200 and response.json()["undone_at"]
    assert (sample.root / W2).is_file() and not (sample.root / "taxes/W2_2024.pdf").exists()
    assert snapshot(sample, W2) == before
    assert again.status_code == 409 and again.json()["detail"] == "This move was already undone."
    # Undoing says the folder was wrong for this file: it is declined from now on, though the
    # suggestion itself is open again, for the user to answer anew.
    assert OrganizationDecision.objects.order_by("id").last().action == "reject"
    assert OrganizationSuggestion.objects.get(pk=w2_suggestion.pk).status == "pending"
    respond(auth_client, w2_suggestion, action="reject")
    assert file_suggest(file_id=before[0], on_demand=True).suggestion.target_folder != "taxes/"
    listed = auth_client.get("/api/inbox/moves", {"folder_id": sample.folder.pk}).json()["results"]
    assert [(item["id"], item["from_path"], item["to_path"]) for item in listed] == [(move_id, W2, "taxes/W2_2024.pdf")]


def test_a_move_and_its_undo_are_announced_on_the_folder_stream(
    auth_client, sample, w2_suggestion, monkeypatch, django_capture_on_commit_callbacks
):
    published: list[dict] = []
    monkeypatch.setattr(decisions, "publish_event", lambda **event: published.append(event))

    with django_capture_on_commit_callbacks(execute=True):
        move_id = respond(auth_client, w2_suggestion, action="accept").json()["move"]["id"]
    with django_capture_on_commit_callbacks(execute=True):
        auth_client.post(f"/api/inbox/moves/{move_id}/undo")

    assert {event["channel"] for event in published} == {folder_channel(sample.folder.pk)}
    moves = [(e["type"], e["data"]["from_path"], e["data"]["to_path"], e["data"]["undone"]) for e in published]
    assert moves == [("file_moved", W2, "taxes/W2_2024.pdf", False), ("file_moved", "taxes/W2_2024.pdf", W2, True)]
    assert all(e["data"]["folder_id"] == sample.folder.pk and e["data"]["move_id"] == move_id for e in published)


def test_undo_conflicts_when_the_old_place_is_taken_or_the_file_moved_again(auth_client, sample, w2_suggestion):
    move_id = respond(auth_client, w2_suggestion, action="accept").json()["move"]["id"]
    (sample.root / W2).write_bytes(b"a new file with the old name")

    taken = auth_client.post(f"/api/inbox/moves/{move_id}/undo")

    assert taken.status_code == 409 and "already exists" in taken.json()["detail"]
    assert (sample.root / "taxes/W2_2024.pdf").is_file()
    File.objects.filter(pk=w2_suggestion.file_id).update(path="taxes/2024/W2_2024.pdf")
    moved = auth_client.post(f"/api/inbox/moves/{move_id}/undo")
    assert moved.status_code == 409 and "was moved or renamed since" in moved.json()["detail"]


def test_organize_on_demand_suggests_for_every_inbox_file(auth_client, sample):
    response = auth_client.post("/api/inbox/organize", {"folder_id": sample.folder.pk}, format="json")

    assert response.status_code == 200, response.json()
    targets = {item["source_path"]: item["target_folder"] for item in response.json()["suggestions"]}
    assert targets == {
        "inbox/W2_2024.pdf": "taxes/",
        "inbox/invoice-INV-20931.txt": "finance/",
        "inbox/lease-renewal-2025.docx": "personal/",
        "inbox/receipt-photo.png": "finance/",
    }
    again = auth_client.post("/api/inbox/organize", {"folder_id": sample.folder.pk}, format="json").json()
    assert again["suggestions"] == []
    assert {item["reason"] for item in again["skipped"]} == {"a suggestion is already pending"}


def test_organize_on_demand_for_given_paths_and_force(auth_client, sample, w2_suggestion):
    respond(auth_client, w2_suggestion, action="reject")
    body = {"folder_id": sample.folder.pk, "paths": [W2, "inbox/nope.pdf"]}

    plain = auth_client.post("/api/inbox/organize", body, format="json").json()
    pending = plain["suggestions"][0]
    OrganizationSuggestion.objects.filter(pk=pending["id"]).update(status="rejected")
    forced = auth_client.post("/api/inbox/organize", {**body, "force": True}, format="json").json()

    assert pending["target_folder"] != "taxes/"
    assert plain["skipped"] == [{"path": "inbox/nope.pdf", "reason": "no such file in this folder's index"}]
    assert [item["target_folder"] for item in forced["suggestions"]] == ["taxes/"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"paths": ["../etc/passwd"]}, "paths"),
        ({"paths": ["/etc/passwd"]}, "paths"),
        ({"paths": ["inbox/"]}, "paths"),
        ({"paths": []}, "paths"),
        ({"paths": "inbox/W2_2024.pdf"}, "paths"),
        ({"folder_id": "x"}, "folder_id"),
    ],
)
def test_bad_organize_requests_are_400(auth_client, sample, body, field):
    response = auth_client.post("/api/inbox/organize", {"folder_id": sample.folder.pk, **body}, format="json")

    assert response.status_code == 400 and field in response.json()["errors"]


def test_settings_default_update_and_validation(auth_client):
    assert auth_client.get("/api/settings/organization").json() == {
        "auto_suggest": True,
        "suggest_threshold": 0.8,
        "auto_move": False,
        "auto_move_threshold": 0.95,
        "include_folders": [],
        "exclude_folders": [],
        "updated_at": None,
    }

    updated = auth_client.put(
        "/api/settings/organization",
        {"auto_move": True, "auto_move_threshold": 0.9, "exclude_folders": ["work", "personal/travel/"]},
        format="json",
    )

    assert updated.status_code == 200
    body = updated.json()
    assert body["auto_move"] is True and body["auto_move_threshold"] == 0.9 and body["suggest_threshold"] == 0.8
    assert body["exclude_folders"] == ["work/", "personal/travel/"]
    assert auth_client.get("/api/settings/organization").json() == body


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"suggest_threshold": 1.5}, "less than or equal to 1"),
        ({"auto_move_threshold": -0.1}, "greater than or equal to 0"),
        ({"include_folders": ["../up"]}, "'..'"),
        ({"exclude_folders": ["/abs"]}, "absolute"),
        ({"suggest_threshold": "high"}, "valid number"),
        (
            {"suggest_threshold": 0.9, "auto_move_threshold": 0.85},
            "auto_move_threshold must be at least suggest_threshold",
        ),
    ],
)
def test_bad_settings_are_400_and_change_nothing(auth_client, body, problem):
    response = auth_client.put("/api/settings/organization", body, format="json")

    assert response.status_code == 400
    assert problem in str(response.json())
    assert auth_client.get("/api/settings/organization").json()["suggest_threshold"] == 0.8


def test_another_users_suggestions_moves_and_folders_are_404(auth_client, other_client, sample, w2_suggestion):
    move_id = respond(auth_client, w2_suggestion, action="accept").json()["move"]["id"]
    other_suggestion = file_suggest(file_id=sample.file("inbox/invoice-INV-20931.txt").pk).suggestion

    assert other_client.get("/api/inbox/suggestions").json()["results"] == []
    assert other_client.get("/api/inbox/moves").json()["results"] == []
    assert respond(other_client, other_suggestion, action="accept").status_code == 404
    assert respond(other_client, other_suggestion, action="accept").json()["detail"] == "Suggestion not found."
    assert other_client.post(f"/api/inbox/moves/{move_id}/undo").status_code == 404
    organize = other_client.post("/api/inbox/organize", {"folder_id": sample.folder.pk}, format="json")
    assert organize.status_code == 404
    assert (sample.root / "inbox/invoice-INV-20931.txt").is_file()
    assert (sample.root / "taxes/W2_2024.pdf").is_file()


def test_anonymous_requests_are_refused(api_client, w2_suggestion):
    assert api_client.get("/api/inbox/suggestions").status_code in (401, 403)
    assert api_client.post(f"/api/inbox/suggestions/{w2_suggestion.pk}/respond", {"action": "accept"}).status_code in (
        401,
        403,
    )

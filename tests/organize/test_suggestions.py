"""Suggestions after indexing, on a copy of the sample folder: who gets one, where, and what it says."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.chat.models import Conversation, Message, MessageType
from apps.library.models import File
from apps.organize.decisions import suggestion_respond, suggestions_expire
from apps.organize.guideline import guideline_read
from apps.organize.models import FileMove, OrganizationDecision, OrganizationSettings, OrganizationSuggestion
from apps.organize.services import file_suggest
from workers.organize import expire_suggestions, suggest_organization

pytestmark = pytest.mark.django_db

INBOX = ["inbox/W2_2024.pdf", "inbox/invoice-INV-20931.txt", "inbox/lease-renewal-2025.docx", "inbox/receipt-photo.png"]


def test_indexing_an_inbox_file_queues_its_suggestion(sample, queued_suggestions):
    queued = {sample.file(path).pk for path in INBOX}

    assert set(queued_suggestions) == queued  # indexed inbox files only (the photo through OCR), not taxes/...


def test_the_hook_suggests_where_the_guideline_says_with_a_suggestion_message(sample, queued_suggestions):
    for file_id in queued_suggestions:
        suggest_organization(file_id)

    suggestions = {s.source_path: s for s in OrganizationSuggestion.objects.filter(folder=sample.folder)}
    assert {path: s.target_folder for path, s in suggestions.items()} == {
        "inbox/W2_2024.pdf": "taxes/",
        "inbox/invoice-INV-20931.txt": "finance/",
        "inbox/lease-renewal-2025.docx": "personal/",
        "inbox/receipt-photo.png": "finance/",
    }
    w2 = suggestions["inbox/W2_2024.pdf"]
    assert w2.status == "pending" and w2.confidence >= 0.8
    assert 'guideline.md line 24: "A W-2 or 1099 always goes to `taxes/`' in w2.reasoning
    assert w2.alternatives and {"folder", "reasoning", "confidence"} <= set(w2.alternatives[0])
    assert timezone.now() + dt.timedelta(days=6) < w2.expires_at < timezone.now() + dt.timedelta(days=8)
    message = w2.message
    assert message.type == MessageType.SUGGESTION and message.role == "agent"
    assert message.content == {
        "suggestionId": w2.pk,
        "filePath": "inbox/W2_2024.pdf",
        "fileName": "W2_2024.pdf",
        "targetFolder": "taxes/",
        "reasoning": w2.reasoning,
        "confidence": w2.confidence,
        "alternatives": w2.alternatives,
    }
    # Files dropped together land in one inbox conversation of the folder.
    (conversation,) = Conversation.objects.filter(folder=sample.folder, kind="inbox")
    assert set(conversation.messages.values_list("type", flat=True)) == {"suggestion"}


def test_the_hook_respects_the_owners_settings(sample, user):
    w2 = sample.file("inbox/W2_2024.pdf").pk
    preferences = OrganizationSettings.objects.create(owner=user, suggest_threshold=0.99)

    assert "under your threshold 0.99" in file_suggest(file_id=w2).skipped

    preferences.auto_suggest = False
    preferences.save()
    assert file_suggest(file_id=w2).skipped == "automatic suggestions are off"
    # Asking on demand ignores both.
    assert file_suggest(file_id=w2, on_demand=True).suggestion is not None


def test_files_outside_the_inbox_or_not_indexed_get_no_automatic_suggestion(sample):
    assert file_suggest(file_id=sample.file("taxes/W2_2023_summary.txt").pk).skipped == "not in the inbox"
    photo = sample.file("inbox/receipt-photo.png")
    # Changed since it was indexed (OCR read the older version).
    File.objects.filter(pk=photo.pk).update(checksum="changed-since-indexing")
    assert file_suggest(file_id=photo.pk).skipped == "not indexed in its current version"
    # On demand the name alone is enough: "receipt" is a finance word in the guideline.
    outcome = file_suggest(file_id=photo.pk, on_demand=True)
    assert outcome.suggestion is not None and outcome.suggestion.target_folder == "finance/"


def test_one_pending_suggestion_per_file_and_redelivery_is_harmless(sample):
    w2 = sample.file("inbox/W2_2024.pdf").pk

    first = file_suggest(file_id=w2)
    again = file_suggest(file_id=w2)

    assert first.suggestion is not None
    assert again.skipped == "a suggestion is already pending" and again.suggestion == first.suggestion
    assert OrganizationSuggestion.objects.filter(file_id=w2).count() == 1


def test_a_rejected_folder_is_not_suggested_again_unless_forced(sample, user):
    w2 = sample.file("inbox/W2_2024.pdf").pk
    first = file_suggest(file_id=w2).suggestion
    assert first is not None and first.target_folder == "taxes/"

    suggestion_respond(suggestion_id=first.pk, owner_id=user.pk, action="reject")
    automatic = file_suggest(file_id=w2)
    on_demand = file_suggest(file_id=w2, on_demand=True)

    assert automatic.suggestion is None or automatic.suggestion.target_folder != "taxes/"
    assert on_demand.suggestion is not None and on_demand.suggestion.target_folder != "taxes/"
    suggestion_respond(suggestion_id=on_demand.suggestion.pk, owner_id=user.pk, action="reject")
    forced = file_suggest(file_id=w2, on_demand=True, force=True)
    assert forced.suggestion is not None and forced.suggestion.target_folder == "taxes/"
    decision = OrganizationDecision.objects.get(suggestion=first)
    assert (decision.action, decision.suggested_target, decision.final_target) == ("reject", "taxes/", "")
    assert decision.digest_embedding is not None


def test_above_the_auto_move_threshold_the_file_moves_without_teaching(sample, user):
    OrganizationSettings.objects.create(owner=user, auto_move=True, suggest_threshold=0.5, auto_move_threshold=0.9)
    lease = sample.file("inbox/lease-renewal-2025.docx")
    chunks = sample.chunk_ids(lease.path)

    outcome = file_suggest(file_id=lease.pk)

    assert outcome.move is not None and outcome.move.automatic
    assert (sample.root / "personal/lease-renewal-2025.docx").is_file()
    assert not (sample.root / "inbox/lease-renewal-2025.docx").exists()
    assert sample.chunk_ids("personal/lease-renewal-2025.docx") == chunks
    assert OrganizationSuggestion.objects.get(pk=outcome.suggestion.pk).status == "accepted"
    assert not OrganizationDecision.objects.exists()  # nobody reviewed it: nothing learned
    action = Message.objects.filter(type=MessageType.ACTION_RESULT).get()
    assert action.content["moveId"] == outcome.move.pk and "automatically" in action.content["details"]


def test_pending_suggestions_expire(sample):
    outcome = file_suggest(file_id=sample.file("inbox/W2_2024.pdf").pk)
    fresh = file_suggest(file_id=sample.file("inbox/invoice-INV-20931.txt").pk)
    OrganizationSuggestion.objects.filter(pk=outcome.suggestion.pk).update(
        expires_at=timezone.now() - dt.timedelta(minutes=1)
    )

    assert expire_suggestions() == 1
    assert suggestions_expire() == 0

    assert OrganizationSuggestion.objects.get(pk=outcome.suggestion.pk).status == "expired"
    assert OrganizationSuggestion.objects.get(pk=fresh.suggestion.pk).status == "pending"


def test_the_guideline_is_read_from_the_source_and_from_the_index_when_the_source_fails(sample):
    assert guideline_read(folder=sample.folder).startswith("# Where things go")

    (sample.root / "guideline.md").unlink()

    assert "A W-2 or 1099 always goes to" in guideline_read(folder=sample.folder)


def test_an_auto_move_blocked_by_a_conflict_leaves_the_suggestion_pending(sample, user):
    OrganizationSettings.objects.create(owner=user, auto_move=True, suggest_threshold=0.5, auto_move_threshold=0.5)
    (sample.root / "personal/lease-renewal-2025.docx").write_text("someone else's lease")

    outcome = file_suggest(file_id=sample.file("inbox/lease-renewal-2025.docx").pk)

    assert outcome.move is None and outcome.suggestion is not None
    assert OrganizationSuggestion.objects.get(pk=outcome.suggestion.pk).status == "pending"
    assert not FileMove.objects.exists()

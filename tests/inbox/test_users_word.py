"""The user's word wins (issue #30): "move X to Y" is carried out even against what learning
inferred, refusals say why in the user's terms, "what's in my inbox?" lists the inbox, and
"organize my inbox" goes through any number of files, a batch per organize turn. Offline, in-process.
"""

from __future__ import annotations

import pytest

from apps.chat.agent.registry import ToolContext
from apps.chat.inbox_conversations import inbox_conversation_current
from apps.inbox.organize_agent import BATCH_SIZE, organize_tools
from apps.inbox.state import InboxRunState
from apps.library.indexing import folder_index
from apps.organize.decisions import move_undo
from apps.organize.models import FileMove, OrganizationSuggestion
from apps.organize.services import file_suggest
from tests.support.inbox_runs import LEASE, W2, answer, send, typed
from tests.support.sample_folder import drop

pytestmark = pytest.mark.django_db(transaction=True)

MOVED_LEASE = "personal/lease-renewal-2025.docx"


def tools_called(events) -> list[str]:
    return [event.data["tool_name"] for event in events if event.type == "tool_call"]


def test_move_x_to_y_after_an_undo_is_carried_out(sample):
    send(sample.folder, "move the lease to my personal folder")
    assert (sample.root / MOVED_LEASE).is_file()
    move_undo(move_id=FileMove.objects.get(to_path=MOVED_LEASE).pk, owner_id=sample.folder.owner_id)
    assert (sample.root / LEASE).is_file()
    # Learning now holds personal/ declined for this very file: the policy would not offer it again.
    assert file_suggest(file_id=sample.file(LEASE).pk, on_demand=True).suggestion.target_folder != "personal/"

    again, events = send(sample.folder, f"Move {LEASE} to personal/")
    assert tools_called(events) == []

    assert answer(again).content["text"] == "Done: moved 1 file."
    (moved,) = [event.data for event in events if event.type == "message" and event.data["type"] == "action_result"]
    assert moved["content"]["details"] == f"Moved {LEASE} to {MOVED_LEASE}."
    assert (sample.root / MOVED_LEASE).is_file() and not (sample.root / LEASE).exists()
    assert sample.file(MOVED_LEASE).pk  # the index follows the file
    # The superseded suggestion is closed; the move can be undone like any other.
    assert not OrganizationSuggestion.objects.filter(file__path=MOVED_LEASE, status="pending").exists()
    assert FileMove.objects.filter(to_path=MOVED_LEASE, undone_at__isnull=True).count() == 1


def test_a_move_to_a_folder_that_does_not_exist_is_refused_in_plain_words(sample):
    run, _ = send(sample.folder, "move the lease to garden/")

    text = answer(run).content["text"]
    assert text == (
        f"There is no folder garden/ in {sample.folder.name}, so nothing was moved. "
        "Folders you have: finance/, personal/, taxes/, work/."
    )
    assert (sample.root / LEASE).is_file()


def test_a_policy_refusal_reads_as_advice_to_the_user_not_to_the_model(sample):
    send(sample.folder, "move the lease to personal")
    move_undo(move_id=FileMove.objects.get(to_path=MOVED_LEASE).pk, owner_id=sample.folder.owner_id)
    conversation = inbox_conversation_current(folder=sample.folder)
    state = InboxRunState(conversation=conversation, user_id=sample.folder.owner_id, run_id="refusal")
    tool = organize_tools(state).get("suggest_organization")
    context = ToolContext(folder_id=sample.folder.pk, user_id=sample.folder.owner_id, question="", run_id="refusal")

    output = tool.run(tool.parse({"path": LEASE, "target": "personal/"}), context)

    assert output.is_error and "the user" in output.data["error"]  # the model's words
    assert output.data["for_user"] == (
        "You turned down personal/ for this file or one just like it. "
        "Say “move lease-renewal-2025.docx to personal/” and I'll move it anyway."
    )


def test_the_organize_agent_suggests_the_folder_the_user_named_even_after_an_undo(sample):
    send(sample.folder, "move the lease to personal")
    move_undo(move_id=FileMove.objects.get(to_path=MOVED_LEASE).pk, owner_id=sample.folder.owner_id)
    conversation = inbox_conversation_current(folder=sample.folder)
    state = InboxRunState(
        conversation=conversation, user_id=sample.folder.owner_id, run_id="told", told_target="personal/"
    )
    tool = organize_tools(state).get("suggest_organization")
    context = ToolContext(folder_id=sample.folder.pk, user_id=sample.folder.owner_id, question="", run_id="told")

    output = tool.run(tool.parse({"path": LEASE, "target": "personal/"}), context)

    assert not output.is_error, output.data
    assert output.data["target"] == "personal/" and output.data["path"] == LEASE


def test_whats_in_my_inbox_lists_the_inbox_files_with_their_state(sample):
    suggested = file_suggest(file_id=sample.file(W2).pk, on_demand=True).suggestion
    assert suggested is not None

    run, events = send(sample.folder, "what's in my inbox?")

    assert tools_called(events) == ["list_inbox", "respond_to_user"]
    text = answer(run).content["text"]
    assert text.startswith("4 files are waiting in inbox/:")
    sure = round(suggested.confidence * 100)
    assert f"- W2_2024.pdf: Suggested: {suggested.target_folder} ({sure}% sure)" in text
    assert "- lease-renewal-2025.docx: No suggestion yet" in text
    assert "guideline" not in text.lower()
    (cards,) = typed(run, "search_result")
    results = cards.content["results"]
    assert sorted(result["path"] for result in results) == sorted(
        file.path for file in sample.folder.files.filter(path__startswith="inbox/")
    )
    assert {(result["folderName"], result["location"]) for result in results} == {(sample.folder.name, "inbox/")}
    assert all(result["state"] for result in results)


def test_organize_my_inbox_goes_through_more_files_than_one_batch(sample, django_capture_on_commit_callbacks):
    for number in range(10):
        drop(
            sample.root,
            f"inbox/invoice-INV-3100{number}.txt",
            f"Invoice INV-3100{number}: amount due 12{number} dollars.",
        )
    with django_capture_on_commit_callbacks(execute=True):
        folder_index(folder_id=sample.folder.pk, inline=True)
    waiting = sample.folder.files.filter(path__startswith="inbox/").count()
    assert waiting == 14 > BATCH_SIZE

    run, events = send(sample.folder, "organize my inbox")

    assert run.metrics["batches"] == 2 and run.metrics["files"] == waiting
    assert tools_called(events).count("suggest_organization") == waiting
    suggested = {message.content["filePath"] for message in typed(run, "suggestion")}
    text = answer(run).content["text"]
    for file in sample.folder.files.filter(path__startswith="inbox/"):
        assert file.path in suggested or f"- {file.path}: no suggestion." in text
    assert "inbox/invoice-INV-31009.txt" in suggested

"""Controlling an answer in-process: stop, regenerate, rate, rename and delete, and who may."""

from __future__ import annotations

import pytest

from apps.chat.cancel import cancel_key, run_cancel_flag_raise, run_cancel_flag_raised
from apps.chat.models import AgentRun, Conversation, Message, MessageFeedback, RunStatus
from apps.chat.services import chat_start, run_execute
from apps.core.events import events_after, redis_client, run_channel
from apps.library.models import FolderMembership
from apps.llm.types import LLMRequest, LLMResponse, ToolCall
from tests.support.chat_library import make_folder
from tests.support.questions import W2_QUESTION

pytestmark = pytest.mark.django_db

ANSWER = "Federal income tax withheld on the 2024 W-2 was 12,300 dollars [1]."


@pytest.fixture
def queued(monkeypatch):
    """Runs that would go to Celery once the request commits."""
    sent: list[str] = []
    monkeypatch.setattr("apps.chat.enqueue.execute_run", sent.append)
    monkeypatch.setattr("apps.library.enqueue.sync_folder", lambda *args: None)
    return sent


@pytest.fixture(autouse=True)
def _no_flags_left():
    yield
    client = redis_client()
    for key in client.scan_iter(match=cancel_key("*")):
        client.delete(key)


def ask(library, *, agent_mode: bool = False) -> AgentRun:
    return chat_start(user=library.folder.owner, folder=library.folder, text=W2_QUESTION, agent_mode=agent_mode)


def stored_events(run: AgentRun) -> list[tuple[str, dict]]:
    return [(event.type, event.data) for event in events_after(channel=run_channel(run.pk))]


def stop_during(run: AgentRun):
    """A model turn during which the owner presses Stop: the flag is up before its first chunk.

    (It runs in the agent loop's model thread, which has its own connection: Redis only, no ORM.)
    """

    def reply(request: LLMRequest) -> LLMResponse:
        run_cancel_flag_raise(run_id=run.pk)
        return LLMResponse(text=ANSWER)

    return reply


# -- stop ----------------------------------------------------------------------------------------


def test_stop_mid_stream_keeps_the_text_so_far_and_ends_cancelled(library, scripted):
    run = ask(library)
    scripted.push(stop_during(run))
    run = run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and run.finished_at is not None
    answer = Message.objects.get(pk=run.answer_id)
    # Stopped at the first chunk: its first word, not the whole answer the model had in hand.
    assert answer.content["text"] == "Federal"
    assert answer.metadata["stopped"] is True and answer.metadata["mode"] == "standard"
    assert set(answer.metadata["waited_ms"]) == {"queued", "first_text", "done"}
    events = stored_events(run)
    assert [type for type, _ in events][-2:] == ["message", "done"]
    assert events[-1][1]["status"] == "cancelled" and events[-1][1]["message_id"] == answer.pk
    assert "Federal income tax" not in "".join(data["text"] for type, data in events if type == "text_delta")


def test_a_stopped_agent_keeps_its_steps(library, scripted):
    search = ToolCall(id="call_1", name="search_folder", arguments={"query": "W-2 federal tax withheld"})
    run = ask(library, agent_mode=True)
    scripted.push(LLMResponse(text="Let me look.", tool_calls=(search,)), stop_during(run))
    run = run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert [call["name"] for call in run.tool_calls] == ["search_folder"]
    answer = Message.objects.get(pk=run.answer_id)
    (step,) = answer.content["steps"]
    assert step["tool_name"] == "search_folder" and step["status"] == "complete"
    assert step["tool_input"] == {"query": "W-2 federal tax withheld"} and step["reasoning"] == "Let me look."
    assert step["duration_ms"] is not None and step["tool_output"]
    assert stored_events(run)[-1][1]["status"] == "cancelled"


def test_cancel_a_queued_run_ends_it_at_once_and_the_worker_then_does_nothing(auth_client, library, scripted):
    run = ask(library)

    response = auth_client.post(f"/api/runs/{run.pk}/cancel")

    assert response.status_code == 202, response.json()
    assert response.json()["status"] == "cancelled"
    (done_type, done), message_type = stored_events(run)[-1], stored_events(run)[-2][0]
    assert (message_type, done_type, done["status"]) == ("message", "done", "cancelled")
    run_execute(run_id=run.pk)  # the task, delivered after the cancel
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and scripted.requests == []
    assert Message.objects.get(pk=run.answer_id).metadata["stopped"] is True


def test_cancel_a_running_run_raises_its_flag(auth_client, library):
    run = ask(library)
    AgentRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)

    response = auth_client.post(f"/api/runs/{run.pk}/cancel")

    assert response.status_code == 202
    assert response.json()["status"] == "running"  # it ends when its executor sees the flag
    assert run_cancel_flag_raised(run_id=run.pk)


@pytest.mark.parametrize("status", [RunStatus.COMPLETED, RunStatus.ERROR, RunStatus.CANCELLED])
def test_cancel_a_finished_run_is_409(auth_client, library, status):
    run = ask(library)
    AgentRun.objects.filter(pk=run.pk).update(status=status)

    response = auth_client.post(f"/api/runs/{run.pk}/cancel")

    assert response.status_code == 409
    assert "already finished" in response.json()["detail"]
    assert not run_cancel_flag_raised(run_id=run.pk)


def test_cancel_is_the_owners_only(other_client, api_client, library):
    run = ask(library)

    assert other_client.post(f"/api/runs/{run.pk}/cancel").status_code == 404
    assert api_client.post(f"/api/runs/{run.pk}/cancel").status_code == 401
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and not run_cancel_flag_raised(run_id=run.pk)


# -- regenerate ----------------------------------------------------------------------------------


def test_regenerate_asks_the_same_question_in_the_same_mode_as_a_new_run(
    auth_client, library, scripted, queued, django_capture_on_commit_callbacks
):
    first = ask(library, agent_mode=True)
    AgentRun.objects.filter(pk=first.pk).update(status=RunStatus.COMPLETED)

    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(f"/api/conversations/{first.conversation_id}/regenerate")

    assert response.status_code == 202, response.json()
    body = response.json()
    again = AgentRun.objects.get(pk=body["run_id"])
    assert again.pk != first.pk and queued == [str(again.pk)]
    assert (again.question_id, again.mode, again.status) == (first.question_id, "agent", RunStatus.QUEUED)
    assert body["events_url"] == f"/api/runs/{again.pk}/events"
    assert Message.objects.filter(conversation_id=first.conversation_id, role="user").count() == 1


def test_regenerate_is_409_while_an_answer_is_written_and_404_for_others(
    auth_client, other_client, api_client, library, queued
):
    run = ask(library)
    url = f"/api/conversations/{run.conversation_id}/regenerate"

    assert auth_client.post(url).status_code == 409
    assert other_client.post(url).status_code == 404
    assert api_client.post(url).status_code == 401
    assert AgentRun.objects.count() == 1


def test_regenerate_refuses_a_folder_no_longer_shared(auth_client, library, other_user, queued):
    shared = make_folder(other_user, name="shared")
    membership = FolderMembership.objects.create(folder=shared, user=library.folder.owner, role="viewer")
    run = chat_start(user=library.folder.owner, folder=shared, text=W2_QUESTION)
    AgentRun.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED)
    membership.delete()

    response = auth_client.post(f"/api/conversations/{run.conversation_id}/regenerate")

    assert response.status_code == 404
    assert AgentRun.objects.count() == 1


def test_a_queued_run_whose_folder_was_unshared_does_not_answer(library, other_user, scripted):
    shared = make_folder(other_user, name="shared")
    membership = FolderMembership.objects.create(folder=shared, user=library.folder.owner, role="viewer")
    run = chat_start(user=library.folder.owner, folder=shared, text=W2_QUESTION)
    membership.delete()

    run = run_execute(run_id=run.pk)

    assert run.status == RunStatus.ERROR and run.answer_id is None
    assert scripted.requests == []
    message = "This folder is no longer available to you."
    assert stored_events(run)[-1] == ("error", {"run_id": str(run.pk), "message": message})


# -- rate ----------------------------------------------------------------------------------------


def answered(library, scripted, *, agent_mode: bool = False) -> Message:
    scripted.push(LLMResponse(text=ANSWER))
    run = run_execute(run_id=ask(library, agent_mode=agent_mode).pk)
    return Message.objects.get(pk=run.answer_id)


def test_feedback_is_one_per_user_and_message_and_changeable(auth_client, library, scripted):
    answer = answered(library, scripted)
    url = f"/api/messages/{answer.pk}/feedback"

    first = auth_client.post(url, {"rating": "down", "comment": "wrong year"}, format="json")
    second = auth_client.post(url, {"rating": "up"}, format="json")

    assert first.status_code == 200 and first.json()["rating"] == "down"
    assert second.status_code == 200
    assert second.json() == {**second.json(), "message_id": answer.pk, "rating": "up", "comment": ""}
    (feedback,) = MessageFeedback.objects.all()
    assert (feedback.rating, feedback.user_id) == ("up", library.folder.owner.pk)
    detail = auth_client.get(f"/api/conversations/{answer.conversation_id}").json()
    rated = next(message for message in detail["messages"] if message["id"] == answer.pk)
    assert rated["feedback"]["rating"] == "up"
    assert next(message for message in detail["messages"] if message["role"] == "user")["feedback"] is None


def test_feedback_is_counted_in_the_metrics_by_mode(auth_client, library, scripted):
    standard = answered(library, scripted)
    agent = answered(library, scripted, agent_mode=True)
    auth_client.post(f"/api/messages/{standard.pk}/feedback", {"rating": "up"}, format="json")
    auth_client.post(f"/api/messages/{agent.pk}/feedback", {"rating": "up"}, format="json")
    auth_client.post(f"/api/messages/{agent.pk}/feedback", {"rating": "down"}, format="json")  # changed

    feedback = auth_client.get("/api/metrics/agent").json()["feedback"]

    assert feedback == {
        "up": 1,
        "down": 1,
        "by_mode": {"standard": {"up": 1, "down": 0}, "agent": {"up": 0, "down": 1}},
    }


def test_feedback_refuses_questions_bad_input_and_other_users(auth_client, other_client, api_client, library, scripted):
    answer = answered(library, scripted)
    question = Message.objects.get(conversation_id=answer.conversation_id, role="user")

    assert auth_client.post(f"/api/messages/{question.pk}/feedback", {"rating": "up"}, format="json").json() == {
        "detail": "Only answers can be rated."
    }
    bad = auth_client.post(f"/api/messages/{answer.pk}/feedback", {"rating": "meh"}, format="json")
    assert bad.status_code == 400 and "rating" in bad.json()["errors"]
    assert other_client.post(f"/api/messages/{answer.pk}/feedback", {"rating": "up"}, format="json").status_code == 404
    assert api_client.post(f"/api/messages/{answer.pk}/feedback", {"rating": "up"}, format="json").status_code == 401
    assert not MessageFeedback.objects.exists()


# -- rename and delete ---------------------------------------------------------------------------


def test_rename_and_delete_a_conversation(auth_client, library, scripted):
    answer = answered(library, scripted)
    url = f"/api/conversations/{answer.conversation_id}"

    renamed = auth_client.patch(url, {"title": "W-2 questions"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["title"] == "W-2 questions"
    assert auth_client.patch(url, {"title": ""}, format="json").status_code == 400

    assert auth_client.delete(url).status_code == 204
    assert not Conversation.objects.filter(pk=answer.conversation_id).exists()
    assert not Message.objects.filter(pk=answer.pk).exists() and not AgentRun.objects.exists()
    assert auth_client.get(url).status_code == 404


def test_delete_waits_for_an_answer_being_written(auth_client, library):
    run = ask(library)

    response = auth_client.delete(f"/api/conversations/{run.conversation_id}")

    assert response.status_code == 409 and "stop it first" in response.json()["detail"]
    assert Conversation.objects.filter(pk=run.conversation_id).exists()


def test_rename_and_delete_are_the_owners_only(other_client, api_client, library):
    run = ask(library)
    url = f"/api/conversations/{run.conversation_id}"

    assert other_client.patch(url, {"title": "mine now"}, format="json").status_code == 404
    assert other_client.delete(url).status_code == 404
    assert api_client.patch(url, {"title": "x"}, format="json").status_code == 401
    assert api_client.delete(url).status_code == 401
    assert Conversation.objects.get(pk=run.conversation_id).title == W2_QUESTION[:80]

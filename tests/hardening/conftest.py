"""Hardening fixtures: one of every owned object, so each /api/ route has something to point at."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.utils import timezone

from apps.chat.models import AgentRun, Conversation, Message, MessageAttachment, MessageFeedback, RunStatus
from apps.core.models import PersonalToken
from apps.core.tokens import personal_token_create
from apps.evaluation.models import EvaluationRun, EvaluationSet
from apps.library.models import File, Folder, FolderInvitation, FolderMembership
from apps.organize.models import FileMove, OrganizationSuggestion
from tests.support.agent_runs import hook_server  # noqa: F401  (a fixture)
from tests.support.fixtures import fresh_throttle_counts  # noqa: F401  (autouse)


@dataclass
class Owned:
    folder: Folder
    file: File
    conversation: Conversation
    inbox_conversation: Conversation
    run: AgentRun
    answer: Message
    suggestion: OrganizationSuggestion
    move: FileMove
    member: FolderMembership
    invitation: FolderInvitation
    proposal: Message  # a guideline line proposed in the inbox conversation
    token: PersonalToken
    attachment: MessageAttachment  # an image of the chat's question
    evaluation_set: EvaluationSet
    evaluation_run: EvaluationRun  # done: the set can be run again and deleted

    def kwargs_for(self, route_name: str) -> dict[str, object]:
        """URL kwargs for a route: the owner's objects of the kinds it takes."""
        return self._ids(inbox=route_name.startswith("inbox-"))

    def ids_for_path(self, path: str) -> dict[str, str]:
        """The same by OpenAPI path template (`/api/inbox/...`), as the strings a URL carries."""
        return {name: str(value) for name, value in self._ids(inbox=path.startswith("/api/inbox/")).items()}

    def _ids(self, *, inbox: bool) -> dict[str, object]:
        return {
            "folder_id": self.folder.pk,
            "file_id": self.file.pk,
            "conversation_id": (self.inbox_conversation if inbox else self.conversation).pk,
            "run_id": self.run.pk,
            "message_id": (self.proposal if inbox else self.answer).pk,
            "suggestion_id": self.suggestion.pk,
            "move_id": self.move.pk,
            "user_id": self.member.user_id,
            "invitation_id": self.invitation.pk,
            "token_id": self.token.pk,
            "attachment_id": self.attachment.pk,
            "evaluation_id": self.evaluation_set.pk,
            "evaluation_run_id": self.evaluation_run.pk,
        }


@pytest.fixture
def owned(user, tmp_path, django_user_model) -> Owned:
    root = tmp_path / "root"
    (root / "inbox").mkdir(parents=True)
    (root / "inbox" / "note.txt").write_text("a note about taxes")
    folder = Folder.objects.create(
        owner=user, source="local", external_id=str(root), name="root", status="ready", last_synced_at=timezone.now()
    )
    file = File.objects.create(
        folder=folder, external_id="inbox/note.txt", path="inbox/note.txt", name="note.txt", status="indexed"
    )
    conversation = Conversation.objects.create(owner=user, folder=folder, kind="chat", title="c")
    inbox_conversation = Conversation.objects.create(owner=user, folder=folder, kind="inbox", title="i")
    question = Message.objects.create(conversation=conversation, role="user", content={"text": "hi"})
    answer = Message.objects.create(conversation=conversation, role="agent", content={"text": "hello"})
    # Rated: a rated answer is what the feedback routes show and turn into evaluation questions.
    MessageFeedback.objects.create(message=answer, user=user, rating="down")
    run = AgentRun.objects.create(
        owner=user,
        conversation=conversation,
        question=question,
        answer=answer,
        status=RunStatus.COMPLETED,
        started_at=timezone.now() - timezone.timedelta(minutes=5),
        finished_at=timezone.now() - timezone.timedelta(minutes=5),
    )
    suggestion = OrganizationSuggestion.objects.create(
        owner=user, folder=folder, file=file, source_path="inbox/note.txt", target_folder="taxes", confidence=0.9
    )
    move = FileMove.objects.create(owner=user, file=file, from_path="old/note.txt", to_path="inbox/note.txt")
    member = FolderMembership.objects.create(
        folder=folder, user=django_user_model.objects.create_user(username="carol"), role="viewer"
    )
    invitation = FolderInvitation.objects.create(
        folder=folder,
        role="viewer",
        token_hash="0" * 64,
        created_by=user,
        expires_at=timezone.now() + timezone.timedelta(days=1),
    )
    proposal = Message.objects.create(
        conversation=inbox_conversation,
        role="agent",
        content={"text": "Shall I remember that?"},
        metadata={"guideline_proposal": {"target": "taxes/", "pattern": "", "line": "- Notes go in `taxes/`."}},
    )
    token, _ = personal_token_create(user=user, name="owner's script", scopes=["read"])
    attachment = MessageAttachment.objects.create(
        message=question, position=1, name="receipt.png", mime_type="image/png", size=4, data=b"\x89PNG"
    )
    evaluation_set = EvaluationSet.objects.create(folder=folder, name="checks", created_by=user)
    evaluation_run = EvaluationRun.objects.create(set=evaluation_set, status="done", created_by=user)
    return Owned(
        folder,
        file,
        conversation,
        inbox_conversation,
        run,
        answer,
        suggestion,
        move,
        member,
        invitation,
        proposal,
        token,
        attachment,
        evaluation_set,
        evaluation_run,
    )

"""Revocation is complete: a revoked member's conversations, runs and answers of the folder are 404
to them in the API, the pages and the run streams; a removed folder keeps only its owner's
conversations (read-only, sources marked removed); a deleted file's citation opens a page saying
so; a re-indexed file's citation finds its passage again by its text."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.chat.models import AgentRun, Conversation
from apps.chat.services import chat_start
from apps.library.members import member_remove
from apps.library.models import Chunk, FolderMembership
from apps.library.services import folder_delete
from tests.support.chat_library import add_cited_answer
from tests.support.questions import W2_QUESTION

pytestmark = pytest.mark.django_db


@pytest.fixture
def member(django_user_model):
    return django_user_model.objects.create_user(username="bob")


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def _browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _asked(library, user):
    """A question of `user` in the library's folder, answered citing the W-2 and the recipe."""
    run = chat_start(user=user, folder=library.folder, text=W2_QUESTION)
    files = [library.files["finance/W2_2024.pdf"], library.files["recipes/pancakes.md"]]
    return run, add_cited_answer(run=run, files=files)


def _reads(run: AgentRun) -> list[str]:
    return [f"/api/conversations/{run.conversation_id}", f"/api/runs/{run.pk}"]


def test_a_revoked_member_no_longer_reads_their_conversations_runs_or_answers(library, member):
    membership = FolderMembership.objects.create(folder=library.folder, user=member, role="viewer")
    run, answer = _asked(library, member)
    client = _api(member)
    for url in _reads(run):
        assert client.get(url).status_code == 200, url
    assert client.get("/api/conversations").json()["count"] == 1

    member_remove(membership=membership, actor=library.folder.owner)

    for url in _reads(run):
        assert client.get(url).status_code == 404, url
    assert client.get("/api/conversations").json()["count"] == 0
    assert client.post(f"/api/messages/{answer.pk}/feedback", {"rating": "up"}, format="json").status_code == 404
    assert client.post(f"/api/runs/{run.pk}/cancel").status_code == 404
    assert client.patch(f"/api/conversations/{run.conversation_id}", {"title": "x"}, format="json").status_code == 404
    # The page that opens a conversation by id, and the run's event stream: 404 too.
    browser = _browser(member)
    assert browser.get(f"/conversations/{run.conversation_id}/").status_code == 404
    stream = browser.get(f"/api/runs/{run.pk}/events")
    assert stream.status_code == 404 and not stream.streaming
    # Nothing was deleted: shared again, they are theirs again.
    FolderMembership.objects.create(folder=library.folder, user=member, role="viewer")
    assert client.get(f"/api/conversations/{run.conversation_id}").status_code == 200


def test_a_member_who_lost_access_at_the_source_reads_none_of_it(library, member):
    membership = FolderMembership.objects.create(folder=library.folder, user=member, role="editor")
    run, _ = _asked(library, member)
    FolderMembership.objects.filter(pk=membership.pk).update(source_access_lost_at="2025-01-01T00:00:00Z")

    assert _api(member).get(f"/api/runs/{run.pk}").status_code == 404
    assert _browser(member).get(f"/api/runs/{run.pk}/events").status_code == 404


def test_removing_a_folder_keeps_the_owners_conversations_and_ends_the_members(library, member):
    owner = library.folder.owner
    FolderMembership.objects.create(folder=library.folder, user=member, role="viewer")
    owners_run, _ = _asked(library, owner)
    members_run, _ = _asked(library, member)

    folder_delete(folder=library.folder, actor=owner)

    # The members': gone with the folder, like a revoke; 404 everywhere.
    assert not Conversation.objects.filter(pk=members_run.conversation_id).exists()
    assert not AgentRun.objects.filter(pk=members_run.pk).exists()
    assert _api(member).get(f"/api/conversations/{members_run.conversation_id}").status_code == 404
    assert _browser(member).get(f"/api/runs/{members_run.pk}/events").status_code == 404
    # The owner's: kept, read-only, the folder's name kept, every citation's source removed.
    client = _api(owner)
    body = client.get(f"/api/conversations/{owners_run.conversation_id}").json()
    assert body["folder_id"] is None and body["folder_removed"] is True
    assert body["folder_name"] == "notes"
    citations = body["messages"][1]["citations"]
    assert [citation["source_removed"] for citation in citations] == [True, True]
    assert client.get(f"/api/runs/{owners_run.pk}").status_code == 200
    assert client.get("/api/conversations").json()["results"][0]["folder_removed"] is True
    regenerate = client.post(f"/api/conversations/{owners_run.conversation_id}/regenerate")
    assert regenerate.status_code == 404  # nothing to ask any more
    page = _browser(owner).get(f"/conversations/{owners_run.conversation_id}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Folder removed" in html and "notes" in html
    assert _browser(member).get(f"/conversations/{owners_run.conversation_id}/").status_code == 404


def test_the_conversation_page_of_a_live_folder_opens_its_chat(library):
    owner = library.folder.owner
    run, _ = _asked(library, owner)
    page = _browser(owner).get(f"/conversations/{run.conversation_id}/")
    assert page.status_code == 302
    assert page["Location"] == f"/folders/{library.folder.pk}/?c={run.conversation_id}"


def test_a_deleted_files_citation_is_marked_and_its_page_says_so(library):
    owner = library.folder.owner
    run, _ = _asked(library, owner)
    w2 = library.files["finance/W2_2024.pdf"]
    w2_id = w2.pk
    w2.delete()

    body = _api(owner).get(f"/api/conversations/{run.conversation_id}").json()
    citations = body["messages"][1]["citations"]
    assert [(c["file_name"], c["source_removed"]) for c in citations] == [
        ("W2_2024.pdf", True),
        ("pancakes.md", False),
    ]
    page = _browser(owner).get(f"/files/{w2_id}?chunk={citations[0]['chunk_id']}")
    assert page.status_code == 404
    html = page.content.decode()
    assert "This file was removed from the folder" in html
    assert 'href="/"' in html  # a way back


def test_a_reindexed_files_citation_finds_its_passage_by_its_text(library):
    owner = library.folder.owner
    _, answer = _asked(library, owner)
    w2 = library.files["finance/W2_2024.pdf"]
    cited = answer.content["citations"][0]
    # A re-index writes the same text as new chunks, under new ids, after one new passage.
    old = list(Chunk.objects.filter(file=w2).order_by("chunk_index").values_list("text", "location"))
    Chunk.objects.filter(file=w2).delete()
    texts = [("A cover page added since.", {}), *old]
    Chunk.objects.bulk_create(
        Chunk(file=w2, folder=library.folder, chunk_index=i, text=text, location=location)
        for i, (text, location) in enumerate(texts)
    )
    found = Chunk.objects.get(file=w2, chunk_index=1)
    assert found.pk != cited["chunk_id"]

    client = _browser(owner)
    page = client.get(f"/files/{w2.pk}", {"chunk": cited["chunk_id"], "quote": cited["snippet"]})
    assert page.status_code == 200
    assert f'data-chunk-id="{found.pk}"' in page.content.decode()
    # Its start alone still finds it (the chunker cut it elsewhere), newlines or not.
    Chunk.objects.filter(pk=found.pk).update(text=found.text.replace(" ", "\n", 3) + " And more words after.")
    quote = "The W-2 form for 2024 reports total wages of 84,500 dollars paid by Acme Corporation in full."
    page = client.get(f"/files/{w2.pk}", {"chunk": cited["chunk_id"], "quote": quote})
    assert f'data-chunk-id="{found.pk}"' in page.content.decode()
    # A passage the file no longer holds marks nothing; the page still opens.
    page = client.get(f"/files/{w2.pk}", {"chunk": cited["chunk_id"], "quote": "nothing like this ( [ * at all"})
    assert page.status_code == 200 and 'data-chunk-id=""' in page.content.decode()

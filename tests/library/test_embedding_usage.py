"""A remote embedder's tokens are model usage too: the real openai SDK against the wire stub's
embeddings route, recorded for the owner of the folder being indexed, and for a chat run's question."""

from __future__ import annotations

import pytest

from apps.chat.services import chat_start, run_execute
from apps.embeddings import providers
from apps.library.indexing import folder_index
from apps.llm.models import UsageRecord
from tests.support.files import write
from tests.support.llm_wire_stub import OPENAI_EMBEDDINGS_PATH

pytestmark = pytest.mark.django_db

QUESTION = "When is the boiler due?"
NOTE = "The boiler was serviced in October by Heatwise and the next visit is due in April."


@pytest.fixture
def remote_embedder(settings, wire_stub):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = wire_stub.openai_base_url
    settings.OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"
    settings.LLM_PRICES = {"text-embedding-3-small": {"input": 0.02, "output": 0.0}}
    providers._embedder.cache_clear()  # its client holds the base URL
    yield wire_stub
    providers._embedder.cache_clear()


def test_indexing_records_the_embedding_tokens_for_the_folders_owner(root, folder, remote_embedder):
    write(root, "boiler.md", f"# Boiler\n\n{NOTE}\n")

    folder_index(folder_id=folder.pk, inline=True)

    assert [request.path for request in remote_embedder.requests] == [OPENAI_EMBEDDINGS_PATH]
    (record,) = UsageRecord.objects.all()
    assert (record.user_id, record.folder_id, record.run_id) == (folder.owner_id, folder.pk, None)
    assert (record.provider, record.model, record.output_tokens) == ("openai", "text-embedding-3-small", 0)
    sent = remote_embedder.requests[0].body["input"]
    assert record.input_tokens == sum(len(text.split()) for text in sent) > 0
    assert record.cost > 0


def test_a_questions_embedding_is_recorded_for_its_run(root, folder, remote_embedder):
    write(root, "boiler.md", f"# Boiler\n\n{NOTE}\n")
    folder_index(folder_id=folder.pk, inline=True)
    UsageRecord.objects.all().delete()

    run = chat_start(user=folder.owner, folder=folder, text=QUESTION)
    run = run_execute(run_id=run.pk)

    embedded = UsageRecord.objects.filter(model="text-embedding-3-small")
    assert [(record.run_id, record.folder_id, record.input_tokens) for record in embedded] == [
        (run.pk, folder.pk, len(QUESTION.split()))
    ]

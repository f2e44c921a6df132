"""The packaged MiniLM path: its tokenizer sizes chunks to the model's window, and indexing works."""

import os

import numpy as np
import pytest

from apps.embeddings.providers import get_embedder
from apps.library.chunking import ModelTokenizer, chunk_document, chunk_tokenizer
from apps.library.indexing import folder_index
from apps.library.models import Chunk, File
from apps.library.parsing import ParsedDocument
from tests.support.files import write


@pytest.fixture
def local_model(settings):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    settings.EMBEDDING_PROVIDER = "local"
    return get_embedder("local")


@pytest.mark.slow
@pytest.mark.django_db
def test_local_model_chunks_fit_its_window_and_index_a_folder(local_model, root, folder):
    tokenizer = chunk_tokenizer()
    assert isinstance(tokenizer, ModelTokenizer)
    text = " ".join(f"Antidisestablishmentarianism clause {n} governs INV-{20000 + n}." for n in range(300))
    pieces = chunk_document(document=ParsedDocument(text=text))
    model_tokens = [
        encoding.ids
        for encoding in local_model.tokenizer.encode_batch(  # type: ignore[attr-defined]
            [piece.text for piece in pieces], add_special_tokens=True
        )
    ]
    assert max(len(ids) for ids in model_tokens) <= 256  # nothing is truncated by the model
    assert min(len(ids) for ids in model_tokens[:-1]) > 200  # and windows are well used

    write(root, "notes/rent.md", "# Rent\nThe apartment rent is 1200 euros per month, paid to the landlord.")
    folder_index(folder_id=folder.pk, inline=True)
    chunk = Chunk.objects.get(file=File.objects.get(folder=folder))
    query = local_model.embed_query("how much is the monthly rent?")
    unrelated = local_model.embed_query("quantum chromodynamics lattice")
    vector = np.asarray(chunk.embedding, dtype=np.float32)
    assert float(vector @ query) > float(vector @ unrelated) + 0.2

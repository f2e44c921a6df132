"""A small indexed corpus written straight into the tables (the ingestion pipeline is not needed).

Embeddings come from the hash embedder, except where a test pins a chunk's vector on purpose:
``far`` chunks get the negated question vector (cosine distance 2, last for the vector side), and
``near`` chunks get the question vector itself although they share no word with it.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

import numpy as np
from django.db.models import F

from apps.embeddings.providers import get_embedder
from apps.library.models import Chunk, File, Folder
from apps.search.services import folder_lexeme_stats_refresh

QUESTION = "quarterly revenue figures"
CODE_QUESTION = "Q4-2024"
FILLER_WORDS = [
    "harbour",
    "lantern",
    "meadow",
    "copper",
    "violin",
    "orchard",
    "glacier",
    "pepper",
    "canyon",
    "ribbon",
    "saddle",
    "marble",
    "thimble",
    "compass",
    "falcon",
    "ember",
    "walnut",
    "quartz",
    "tundra",
    "willow",
    "anchor",
    "bramble",
    "cobalt",
    "dune",
    "fjord",
    "garnet",
    "hazel",
]
FILLER_CHUNKS = 120  # more than the fusion depth, so some chunks are found by one side only


@dataclass
class Corpus:
    folder: Folder
    files: dict[str, File] = field(default_factory=dict)
    chunks: dict[str, Chunk] = field(default_factory=dict)


def _vector(text: str) -> np.ndarray:
    return get_embedder("hash").embed_query(text)


def make_file(
    folder: Folder,
    path: str,
    *,
    mime_type: str = "text/markdown",
    modified: dt.datetime | None = None,
    preview: str = "",
    embedding: np.ndarray | None = None,
) -> File:
    return File.objects.create(
        folder=folder,
        external_id=path,
        path=path,
        name=path.rsplit("/", 1)[-1],
        mime_type=mime_type,
        modified_time=modified or dt.datetime(2024, 6, 1, tzinfo=dt.UTC),
        preview=preview,
        status="indexed",
        embedding=embedding if embedding is not None else _vector(f"{path} {preview}"),
    )


def make_chunks(file: File, texts: list[str], *, embeddings: list[np.ndarray] | None = None) -> list[Chunk]:
    """Chunks of a word a token, added to the file's token count as indexing counts it."""
    vectors = embeddings or list(get_embedder("hash").embed_documents(texts))
    tokens = [len(text.split()) for text in texts]
    File.objects.filter(pk=file.pk).update(token_count=F("token_count") + sum(tokens))
    return Chunk.objects.bulk_create(
        Chunk(
            file=file,
            folder_id=file.folder_id,
            chunk_index=i,
            text=text,
            embedding=vector,
            location={"chunk": i},
            token_count=count,
        )
        for i, (text, vector, count) in enumerate(zip(texts, vectors, tokens, strict=True))
    )


def build_corpus(owner, *, name: str = "notes", seed: int = 7, refresh_stats: bool = True) -> Corpus:
    folder = Folder.objects.create(owner=owner, source="local", external_id=f"/srv/{name}", name=name, status="ready")
    corpus = Corpus(folder=folder)
    rng = random.Random(seed)
    filler = make_file(
        folder, "archive/filler.txt", mime_type="text/plain", modified=dt.datetime(2023, 1, 15, tzinfo=dt.UTC)
    )
    make_chunks(filler, [" ".join(rng.choices(FILLER_WORDS, k=60)) for _ in range(FILLER_CHUNKS)])
    corpus.files["filler"] = filler

    question = _vector(QUESTION)
    code = make_file(folder, "reports/finance/summary-2024.md", preview="Finance summary")
    # Found by keywords only: its vector points away from the question.
    corpus.chunks["code"], corpus.chunks["finance"] = make_chunks(
        code,
        [
            "Board minutes: the Q4-2024 close is signed off; reference code Q4-2024 goes on every invoice.",
            "Quarterly revenue figures rose again and the revenue outlook for next quarter is strong.",
        ],
        embeddings=[-_vector(CODE_QUESTION), _vector("Quarterly revenue figures rose again and the outlook")],
    )
    corpus.files["code"] = code
    # Found by the vector only: it shares no word with the question but sits on its vector.
    semantic = make_file(
        folder, "reports/sales.pdf", mime_type="application/pdf", modified=dt.datetime(2024, 11, 2, tzinfo=dt.UTC)
    )
    (corpus.chunks["near"],) = make_chunks(
        semantic, ["Takings for the three months climbed steadily, said the treasurer."], embeddings=[question]
    )
    corpus.files["semantic"] = semantic
    w2 = make_file(folder, "inbox/W2_2024.pdf", mime_type="application/pdf", preview="Wage and tax statement")
    (corpus.chunks["w2"],) = make_chunks(w2, ["Form W-2 wage and tax statement for employee 4471."])
    corpus.files["w2"] = w2
    if refresh_stats:
        folder_lexeme_stats_refresh(folder_id=folder.pk)
    return corpus


def chunk_ids(folder: Folder) -> set[int]:
    return set(Chunk.objects.filter(folder=folder).values_list("id", flat=True))

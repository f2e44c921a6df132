"""The local MiniLM end to end: pipeline chunks/s against the model's own encode throughput.

Same run, same chunk texts: the model alone encodes them (the local embedder, in batches of
EMBEDDING_BATCH_TOKENS), before and after the pipeline indexes the folder in-process. Target: the
pipeline reaches >= 0.9 of the model's throughput (the model is the limit, not the plumbing).

Then small files (one chunk each), indexed as the queue's tasks index them, side by side: one
``files_index`` call per file (one task per file) against one per ``file_groups`` group (the
``index_files`` tasks ``files_enqueue`` sends), each on its own copy of the same notes.

    .venv/bin/python bench/ingest/ingest_local_model.py [--files 60] [--small-files 300]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from bench.common.scratch import scratch_services
from bench.ingest.common import timed

os.environ["EMBEDDING_PROVIDER"] = "local"

_WORD_TEXT = (
    "the a of to and in for on with by from at as is was are be has have will can should about after "
    "before invoice payment tax return budget report meeting project client deadline contract lease rent "
    "salary account bank statement transfer receipt expense travel flight hotel insurance policy claim "
    "doctor appointment school course software license subscription renewal quarter annual review summary "
    "plan design launch release customer support ticket metric growth revenue cost savings fund estimate "
    "form team decision risk action owner week month year office home family trip city train morning "
    "evening"
)
_WORDS = tuple(_WORD_TEXT.split())


def make_corpus(root: Path, *, files: int, sentences: int = 90, seed: int = 11) -> None:
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for index in range(files):
        lines = [" ".join(rng.choices(_WORDS, k=rng.randint(10, 18))).capitalize() + "." for _ in range(sentences)]
        body = "".join(f"\n## Part {n}\n\n" + " ".join(lines[n : n + 15]) for n in range(0, len(lines), 15))
        (root / f"note{index:03d}.md").write_text(f"# Note {index}\n{body}\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--small-files", type=int, default=300)
    args = parser.parse_args()
    with scratch_services("bench_local_model"):
        corpus = Path(tempfile.mkdtemp(prefix="bench-local-", dir=ROOT / "var"))
        try:
            make_corpus(corpus / "notes", files=args.files)
            run(corpus / "notes")
            for copy in ("per-file", "grouped"):
                make_corpus(corpus / copy, files=args.small_files, sentences=4)
            small_files(corpus)
        finally:
            shutil.rmtree(corpus, ignore_errors=True)


def run(corpus: Path) -> None:
    from django.contrib.auth import get_user_model

    from apps.connectors.local import LocalSource
    from apps.embeddings.providers import get_embedder
    from apps.library.chunking import chunk_document
    from apps.library.indexing import folder_index
    from apps.library.models import Chunk, Folder
    from apps.library.parsing import parse_document

    started = time.monotonic()
    embedder = get_embedder()
    embedder.embed_documents(["warm up the model"] * 8)
    print(f"model loaded and warmed up in {time.monotonic() - started:.1f} s")

    source = LocalSource(corpus)
    texts = []
    for entry in source.list_entries():
        data, mime = source.read_bytes(entry)
        texts.extend(
            piece.text for piece in chunk_document(document=parse_document(data=data, mime_type=mime, name=entry.name))
        )
    rows = len(texts)

    def model_alone(label: str) -> float:
        started = time.monotonic()
        embedder.embed_documents(texts)
        elapsed = time.monotonic() - started
        timed(label, elapsed, rows)
        return elapsed

    print(f"\n{rows} chunks of up to 256 word pieces:")
    before = model_alone("model.encode alone (before)")
    owner = get_user_model().objects.create_user(username="bench")
    folder = Folder.objects.create(owner=owner, source="local", external_id=str(corpus), name="local-model")
    started = time.monotonic()
    folder_index(folder_id=folder.pk, inline=True)
    pipeline = time.monotonic() - started
    assert Chunk.objects.filter(folder=folder).count() == rows
    timed("pipeline end to end (folder_index --inline)", pipeline, rows)
    after = model_alone("model.encode alone (after)")
    model = (before + after) / 2
    print(f"\n  embedder alone {rows / model:.1f} chunks/s, pipeline {rows / pipeline:.1f} chunks/s")
    print(f"  pipeline / model throughput: {model / pipeline:.2f} (target >= 0.9)")


def small_files(corpus: Path) -> None:
    from django.contrib.auth import get_user_model

    from apps.library.indexing import file_groups, files_index, folder_index
    from apps.library.models import Chunk, File, Folder

    owner = get_user_model().objects.get(username="bench")
    seconds = {}
    for copy in ("per-file", "grouped"):
        folder = Folder.objects.create(owner=owner, source="local", external_id=str(corpus / copy), name=copy)
        folder_index(folder_id=folder.pk)  # lists and queues; the queue's work is done below
        file_ids = list(File.objects.filter(folder=folder).order_by("path").values_list("pk", flat=True))
        batches = [[file_id] for file_id in file_ids] if copy == "per-file" else file_groups(file_ids=file_ids)
        started = time.monotonic()
        for batch in batches:
            files_index(file_ids=batch)
        seconds[copy] = time.monotonic() - started
        rows = Chunk.objects.filter(folder=folder).count()
        timed(f"{len(file_ids)} small files, {len(batches)} tasks ({copy})", seconds[copy], rows)
    print(f"\n  grouped / per-file throughput: {seconds['per-file'] / seconds['grouped']:.2f}")


if __name__ == "__main__":
    main()

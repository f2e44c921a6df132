"""Pipeline overhead: index a generated folder end to end (hash embedder) against its parts.

Parts, each timed alone on the same files and rows: listing (walk + sha256), parse + chunk,
embedding, and one plain binary COPY of all the chunk rows into library_chunk (same indexes and
trigger). Target: the end-to-end pipeline takes no more than 1.5x the sum of the parts.
Also measured: writes with tsvectors computed inline versus deferred + backfilled, and what the
live HNSW index costs a COPY.

    .venv/bin/python bench/ingest/ingest_pipeline.py [--files 2000] [--words 1900]
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
from bench.ingest.common import CREATE_HNSW, DROP_HNSW, random_sentences, timed, vocabulary

os.environ["EMBEDDING_PROVIDER"] = "hash"


def make_corpus(root: Path, *, files: int, words_per_file: int, seed: int = 7) -> None:
    from tests.support.documents import docx_bytes, pdf_bytes

    rng = random.Random(seed)
    words, cum_weights = vocabulary(rng)
    per_file = max(1, words_per_file // 12)
    for index in range(files):
        folder = root / f"area{index % 10}" / f"year{2015 + index % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        sentences = random_sentences(rng, words, cum_weights, per_file)
        kind = index % 20
        if kind == 0:
            pages = [" ".join(sentences[i : i + 40]) for i in range(0, len(sentences), 40)]
            lines = [
                "\n".join(" ".join(page.split()[j : j + 12]) for j in range(0, len(page.split()), 12)) for page in pages
            ]
            (folder / f"doc{index}.pdf").write_bytes(pdf_bytes(lines))
        elif kind == 1:
            blocks = [("Heading 1", f"Section {n}") if n % 10 == 0 else ("", s) for n, s in enumerate(sentences)]
            (folder / f"doc{index}.docx").write_bytes(docx_bytes(blocks))
        elif kind == 2:
            body = "".join(
                f"<h2>Part {n}</h2><p>{' '.join(sentences[n : n + 8])}</p>" for n in range(0, len(sentences), 8)
            )
            (folder / f"page{index}.html").write_text(
                f"<html><head><title>Page {index}</title></head><body>{body}</body></html>"
            )
        elif kind == 3:
            rows = [f"INV-{20000 + n},2024-{1 + n % 12:02d}-{1 + n % 28:02d},{s}" for n, s in enumerate(sentences)]
            (folder / f"ledger{index}.csv").write_text("code,date,description\n" + "\n".join(rows) + "\n")
        elif kind % 2:
            (folder / f"note{index}.txt").write_text("\n\n".join(sentences))
        else:
            text = "".join(
                f"\n## Topic {n}\n\n" + " ".join(sentences[n : n + 10]) for n in range(0, len(sentences), 10)
            )
            (folder / f"note{index}.md").write_text(f"# Note {index}\n{text}\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--words", type=int, default=1900, help="words per file (about 10 chunks)")
    args = parser.parse_args()
    with scratch_services("bench_pipeline"):
        corpus = Path(tempfile.mkdtemp(prefix="bench-corpus-", dir=ROOT / "var"))
        try:
            started = time.monotonic()
            make_corpus(corpus, files=args.files, words_per_file=args.words)
            print(f"generated {args.files} files in {time.monotonic() - started:.1f} s under {corpus}")
            run(corpus)
        finally:
            shutil.rmtree(corpus, ignore_errors=True)


def run(corpus: Path) -> None:
    import numpy as np
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from apps.connectors.local import LocalSource
    from apps.embeddings.providers import get_embedder
    from apps.library import indexing
    from apps.library.chunk_store import chunks_replace
    from apps.library.chunking import chunk_document
    from apps.library.indexing import folder_index
    from apps.library.models import Chunk, File, Folder
    from apps.library.parsing import ParseError, UnsupportedDocument, parse_document
    from apps.library.reconcile import folder_reconcile

    owner = get_user_model().objects.create_user(username="bench")

    def fresh_folder(name: str) -> Folder:
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE library_chunk, library_file, library_indexingjob CASCADE")
            cursor.execute("VACUUM ANALYZE library_chunk")
        Folder.objects.all().delete()
        return Folder.objects.create(owner=owner, source="local", external_id=str(corpus), name=name)

    print("\nparts, each alone:")
    source = LocalSource(corpus)
    started = time.monotonic()
    entries = list(source.list_entries())
    t_list = time.monotonic() - started
    timed(f"list + sha256 of {len(entries)} files", t_list)

    started = time.monotonic()
    pieces_by_path = {}
    for entry in entries:
        data, mime = source.read_bytes(entry)
        try:
            document = parse_document(data=data, mime_type=mime, name=entry.name)
        except (ParseError, UnsupportedDocument):
            continue
        pieces_by_path[entry.path] = chunk_document(document=document)
    t_parse = time.monotonic() - started
    texts = [piece.text for pieces in pieces_by_path.values() for piece in pieces]
    rows = len(texts)
    timed(f"read + parse + chunk ({rows} chunks)", t_parse, rows)

    embedder = get_embedder()
    batch = settings.EMBEDDING_BATCH_SIZE
    started = time.monotonic()
    vectors = np.concatenate([embedder.embed_documents(texts[i : i + batch]) for i in range(0, rows, batch)])
    t_embed = time.monotonic() - started
    timed("embed (hash embedder, batches of EMBEDDING_BATCH_SIZE)", t_embed, rows)

    def plain_copy(label: str, *, defer: bool = False, drop_hnsw: bool = False) -> float:
        folder = fresh_folder("copy")
        folder_reconcile(folder=folder, entries=entries)
        ids = dict(File.objects.filter(folder=folder).values_list("path", "pk"))
        with connection.cursor() as cursor:
            if drop_hnsw:
                for statement in DROP_HNSW:
                    cursor.execute(statement)
            started = time.monotonic()
            with transaction.atomic():
                if defer:
                    cursor.execute("SET LOCAL folderchat.defer_search_vector = 'on'")
                offset = 0
                for path, pieces in pieces_by_path.items():
                    # One COPY per file keeps memory flat; the rows and the transaction are one.
                    chunks_replace(
                        file_id=ids[path],
                        folder_id=folder.pk,
                        pieces=pieces,
                        vectors=vectors[offset : offset + len(pieces)],
                    )
                    offset += len(pieces)
            elapsed = time.monotonic() - started
            if drop_hnsw:
                cursor.execute("TRUNCATE library_chunk")
                for statement in CREATE_HNSW:
                    cursor.execute(statement)
        timed(label, elapsed, rows)
        return elapsed

    t_copy = plain_copy("plain COPY, one transaction (HNSW + GIN live, tsvector inline)")
    print("\nwhat the write costs, by index and trigger (plain COPY):")
    plain_copy("  tsvector deferred (NULL), HNSW live", defer=True)
    plain_copy("  tsvector inline, HNSW dropped", drop_hnsw=True)
    plain_copy("  tsvector deferred, HNSW dropped", defer=True, drop_hnsw=True)

    print("\nend to end (folder_index --inline: list, reconcile, per file claim/read/parse/chunk/embed/COPY/")
    print("update/counters/progress event, then the backfill):")
    results = {}
    for defer in (False, True):
        settings.INDEX_DEFER_SEARCH_VECTOR = defer
        folder = fresh_folder("pipeline")
        backfill_seconds = []
        real_backfill = indexing.search_vectors_backfill

        def timed_backfill(real=real_backfill, out=backfill_seconds, **kwargs):
            began = time.monotonic()
            result = real(**kwargs)
            out.append(time.monotonic() - began)
            return result

        indexing.search_vectors_backfill = timed_backfill
        started = time.monotonic()
        folder_index(folder_id=folder.pk, inline=True)
        elapsed = time.monotonic() - started
        indexing.search_vectors_backfill = real_backfill
        indexed = Chunk.objects.filter(folder=folder).count()
        missing = Chunk.objects.filter(folder=folder, search_vector__isnull=True).count()
        assert indexed == rows and missing == 0, (indexed, rows, missing)
        label = "tsvector deferred + backfill" if defer else "tsvector inline (trigger)"
        timed(f"pipeline, {label}", elapsed, rows)
        if defer:
            timed("  of which the backfill", sum(backfill_seconds), rows)
        results[defer] = elapsed
    settings.INDEX_DEFER_SEARCH_VECTOR = False

    parts = t_list + t_parse + t_embed + t_copy
    best = min(results.values())
    print("\nsummary:")
    timed("sum of parts (list + parse/chunk + embed + plain COPY)", parts, rows)
    timed("pipeline (best mode)", best, rows)
    print(f"  pipeline / sum of parts: {best / parts:.2f}x (target <= 1.5x)")
    print(f"  deferred / inline tsvector: {results[True] / results[False]:.2f}x")


if __name__ == "__main__":
    main()

"""Hybrid search latency for long natural-language questions, the question's embedding included.

The CACM requests (long questions: "I'm interested in mechanisms for communicating between
disjoint processes, ...") are searched through ``chunk_search`` in hybrid mode, the way an agent
searches: each question embedded by the library (MiniLM) and searched ``--repeats`` times. Side
by side in one run: the first search of each question (the model embeds it) and the repeats
(the question's embedding comes from the per-process cache, ``selectors._query_embedding``), and
the statement alone (the vector passed in). Folders: the Cranfield and CACM folders that
bench/search/search_quality.py indexed (small: 1-4k chunks) and, with ``--large N``, a folder of N
chunks made by copying the CACM chunks (rows, embeddings and tsvectors as they are) in the same
scratch database, its lexeme statistics refreshed.

    .venv/bin/python bench/search/search_quality.py --collections cacm cranfield   # once: indexes the folders
    .venv/bin/python bench/search/search_latency.py [--large 50000] [--repeats 3] [--keyword-caps 500 2000]

``--keyword-caps`` measures each folder again with each value of ``selectors.KEYWORD_CANDIDATE_CAP``
(the keyword candidates a folder searched through the GIN index ranks), side by side.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.search.common import cacm, documents_path, percentile, use_scratch_services
from bench.search.search_quality import SCRATCH_DB

COPY_CHUNKS = """
INSERT INTO library_chunk (file_id, folder_id, chunk_index, text, embedding, location, token_count, search_vector)
SELECT f.id, %(folder_id)s, c.chunk_index, c.text, c.embedding, c.location, c.token_count, c.search_vector
FROM library_chunk c
JOIN library_file source ON source.id = c.file_id
JOIN library_file f ON f.folder_id = %(folder_id)s AND f.path = %(copy)s || '/' || source.path
WHERE c.folder_id = %(source_id)s
"""


def folder_of(name: str) -> int | None:
    from apps.library.models import Folder

    folder = Folder.objects.filter(external_id=str(documents_path(name, 256))).first()
    return folder.pk if folder else None


def large_folder(source_id: int, rows: int) -> int:
    """A folder of about ``rows`` chunks: copies of the source folder's files and chunks."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from apps.library.models import Chunk, File, Folder
    from apps.search.services import folder_lexeme_stats_refresh

    owner = get_user_model().objects.get(username="bench-search")
    folder, _ = Folder.objects.get_or_create(
        owner=owner, source="local", external_id=f"bench-latency-{rows}", defaults={"name": f"large-{rows}"}
    )
    source_rows = Chunk.objects.filter(folder_id=source_id).count()
    copies = max(1, round(rows / source_rows))
    done = File.objects.filter(folder=folder).values("path").distinct().count() // max(
        1, File.objects.filter(folder_id=source_id).count()
    )
    started = time.perf_counter()
    for copy in range(done, copies):
        with transaction.atomic(), connection.cursor() as cursor:
            files = [
                File(
                    folder=folder,
                    external_id=f"{copy}/{f.external_id}",
                    name=f.name,
                    path=f"{copy}/{f.path}",
                    mime_type=f.mime_type,
                    size=f.size,
                    status=f.status,
                )
                for f in File.objects.filter(folder_id=source_id)
            ]
            File.objects.bulk_create(files)
            cursor.execute(COPY_CHUNKS, {"folder_id": folder.pk, "source_id": source_id, "copy": str(copy)})
    if copies > done:
        folder_lexeme_stats_refresh(folder_id=folder.pk)
        print(f"  built folder {folder.pk} ({copies} copies) in {time.perf_counter() - started:.0f} s")
    return folder.pk


def measure(folder_id: int, questions: list[str], repeats: int, label: str) -> None:
    from apps.embeddings.providers import get_embedder
    from apps.search import planning, selectors

    rows = planning.folder_chunk_count(folder_id=folder_id)
    selectors._query_embedding.cache_clear()
    first, cached, statement = [], [], []
    for question in questions:
        for attempt in range(repeats):
            started = time.perf_counter()
            selectors.chunk_search(folder_id=folder_id, query=question, k=10)
            (first if attempt == 0 else cached).append((time.perf_counter() - started) * 1000)
        vector = get_embedder().embed_query(question)
        started = time.perf_counter()
        selectors.chunk_search(folder_id=folder_id, query=question, k=10, query_vector=vector)
        statement.append((time.perf_counter() - started) * 1000)
    for name, timings in [("first (embeds)", first), ("repeat (cached)", cached), ("statement only", statement)]:
        print(
            f"  {rows:>8} chunks {label:<10} {name:<16} n={len(timings):<4} p50 {percentile(timings, 50):>6.1f} ms  "
            f"p95 {percentile(timings, 95):>6.1f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--large", type=int, default=0, help="also a folder of about this many chunks")
    parser.add_argument("--repeats", type=int, default=3, help="searches of each question (an agent's run)")
    parser.add_argument(
        "--keyword-caps", type=int, nargs="+", default=[], help="KEYWORD_CANDIDATE_CAP values to compare"
    )
    args = parser.parse_args()
    use_scratch_services(SCRATCH_DB)
    questions = list(cacm().queries.values())
    words = statistics.mean(len(q.split()) for q in questions)
    print(f"{len(questions)} CACM questions, {words:.0f} words on average; load average {os.getloadavg()[0]:.1f}")
    folders = [folder for folder in (folder_of("cranfield"), folder_of("cacm")) if folder]
    if not folders:
        raise SystemExit("index the collections first: .venv/bin/python bench/search/search_quality.py")
    if args.large:
        folders.append(large_folder(folders[-1], args.large))
    from apps.search import selectors

    caps = args.keyword_caps or [selectors.KEYWORD_CANDIDATE_CAP]
    for folder_id in folders:
        for cap in caps:
            selectors.KEYWORD_CANDIDATE_CAP = cap
            measure(folder_id, questions, args.repeats, f"cap {cap}")


if __name__ == "__main__":
    main()

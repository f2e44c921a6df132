"""Keyword-heavy questions over the sample folder: codes, identifiers, names, amounts.

Each labelled question names the files that answer it. Two folders are indexed through the real
pipeline (``folder_index``, local MiniLM embeddings) into the scratch database
``bench_search_keywords`` (re-runs only re-index changed files): ``sample_folder/`` as it is
(19 chunks: every chunk makes the vector side's top 50), and a copy of it with the 1,400
Cranfield abstracts added under ``distractors/``, where the vector side's top 50 is a real cut.
Every question goes through ``chunk_search`` in each mode. Reported: the rank of the first chunk
from an answering file per mode, and hit@3 (target: every question in hybrid top-3, including
those the vector side misses).

    .venv/bin/python bench/search/search_keywords.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from bench.search.common import percentile, use_scratch_services

SCRATCH_DB = "bench_search_keywords"
SAMPLE = ROOT / "sample_folder"
MODES = ["keyword", "vector", "hybrid"]
LABELLED: list[tuple[str, set[str]]] = [
    ("INV-20935", {"finance/invoices-2024.csv"}),
    ("KX7P2Q", {"personal/travel-plans.md"}),
    ("ATL-482", {"work/meeting-notes-2024-11-18.md"}),
    ("INV-20924", {"finance/invoices-2024.csv", "finance/bank-statement-2024-12.pdf", "taxes/2024-tax-checklist.md"}),
    ("INV-20917", {"finance/invoices-2024.csv", "taxes/2024-tax-checklist.md"}),
    ("82,150.00", {"inbox/W2_2024.pdf"}),
    ("78,400.00", {"taxes/W2_2023_summary.txt"}),
    ("12,480.00 withheld", {"inbox/W2_2024.pdf"}),
    ("+1 555 0147", {"personal/contacts.json"}),
    ("apartment 4B", {"inbox/lease-renewal-2025.docx"}),
    ("5,155.13", {"finance/bank-statement-2024-12.pdf"}),
    ("6,420.18 opening balance", {"finance/bank-statement-2024-12.pdf"}),
    ("Tram 28", {"personal/travel-plans.md"}),
    ("LX Factory", {"personal/travel-plans.md"}),
    ("Okafor Tax Advisors", {"personal/contacts.json"}),
    ("1099-NEC", {"taxes/2024-tax-checklist.md", "taxes/call-notes-2025-01-10.md"}),
    ("dana@whitfield.example", {"personal/contacts.json"}),
    ("Priya Raman", {"work/meeting-notes-2024-11-18.md", "work/project-atlas.html"}),
    ("W2_2024.pdf", {"taxes/2024-tax-checklist.md", "inbox/W2_2024.pdf"}),
    ("Q4-2024 onboarding completion 78%", {"work/q4-2024-report.docx"}),
    ("Q4-2024 estimated tax 1,150 USD", {"taxes/2024-tax-checklist.md", "taxes/call-notes-2025-01-10.md"}),
    ("what is the booking reference KX7P2Q for?", {"personal/travel-plans.md"}),
    ("when is INV-20931 due?", {"inbox/invoice-INV-20931.txt"}),
    ("who is ticket ATL-482 assigned to?", {"work/meeting-notes-2024-11-18.md"}),
    ("Box 12a Code D 7,000.00", {"inbox/W2_2024.pdf"}),
    ("Harbor Savings Bank", {"finance/bank-statement-2024-12.pdf"}),
]


def with_distractors() -> Path:
    """sample_folder plus the Cranfield abstracts, as files on disk (rewritten only when changed)."""
    from bench.search.common import cranfield

    root = ROOT / "var" / "bench" / "keywords-with-distractors"
    files = {path.relative_to(SAMPLE): path.read_bytes() for path in SAMPLE.rglob("*") if path.is_file()}
    files |= {
        Path("distractors") / f"cran-{n:04d}.txt": (text + "\n").encode() for n, text in cranfield().documents.items()
    }
    for relative, data in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
    return root


def indexed_folder(root: Path, name: str) -> int:
    from django.contrib.auth import get_user_model

    from apps.library.indexing import folder_index
    from apps.library.models import Chunk, Folder
    from apps.search.services import folder_lexeme_stats_refresh

    owner, _ = get_user_model().objects.get_or_create(username="bench-search")
    folder, _ = Folder.objects.get_or_create(
        owner=owner, source="local", external_id=str(root.resolve()), defaults={"name": name}
    )
    started = time.perf_counter()
    folder_index(folder_id=folder.pk, inline=True)
    folder_lexeme_stats_refresh(folder_id=folder.pk)
    chunks = Chunk.objects.filter(folder=folder).count()
    print(f"\n{name}: {folder.files.count()} files, {chunks} chunks, indexed in {time.perf_counter() - started:.0f} s")
    return folder.pk


def first_rank(folder_id: int, query: str, mode: str, relevant: set[str], vector) -> tuple[int | None, float]:
    from apps.search.selectors import chunk_search

    started = time.perf_counter()
    hits = chunk_search(folder_id=folder_id, query=query, k=10, mode=mode, query_vector=vector)
    took = (time.perf_counter() - started) * 1000
    rank = next((n for n, hit in enumerate(hits, start=1) if hit.path in relevant), None)
    return rank, took


def main() -> None:
    use_scratch_services(SCRATCH_DB)
    report(indexed_folder(SAMPLE, "sample_folder"))
    report(indexed_folder(with_distractors(), "sample_folder + 1,400 Cranfield abstracts"))


def report(folder_id: int) -> None:
    print(f"{'question':<42} " + " ".join(f"{mode:>8}" for mode in MODES))
    from apps.embeddings.providers import get_embedder

    hits_at_3 = dict.fromkeys(MODES, 0)
    rescued, timings, embedding_timings = 0, [], []
    get_embedder().embed_query("warm up")
    for query, relevant in LABELLED:
        started = time.perf_counter()
        vector = get_embedder().embed_query(query)
        embedding_timings.append((time.perf_counter() - started) * 1000)
        ranks = {}
        for mode in MODES:
            ranks[mode], took = first_rank(folder_id, query, mode, relevant, vector)
            timings.append(took)
            hits_at_3[mode] += ranks[mode] is not None and ranks[mode] <= 3
        rescued += (ranks["vector"] or 99) > 3 and (ranks["hybrid"] or 99) <= 3
        print(f"{query[:42]:<42} " + " ".join(f"{ranks[mode] or '-':>8}" for mode in MODES))
    total = len(LABELLED)
    print("\nhit@3: " + ", ".join(f"{mode} {hits_at_3[mode]}/{total}" for mode in MODES))
    print(f"questions the vector side misses (rank > 3) that hybrid still has in its top 3: {rescued}")
    print(
        f"search latency (statement, question already embedded): p50 {percentile(timings, 50):.1f} ms, "
        f"p95 {percentile(timings, 95):.1f} ms; embedding the question: p50 "
        f"{percentile(embedding_timings, 50):.1f} ms"
    )


if __name__ == "__main__":
    main()

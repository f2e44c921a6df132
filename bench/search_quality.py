"""Search quality on the Cranfield collection: nDCG@10 and recall@100 for keyword, vector, hybrid.

The 1,400 abstracts are written out as text files and indexed as a local folder through the real
pipeline (``apps.library.indexing.folder_index``: parse, token-aware chunking, MiniLM embeddings,
COPY, tsvector), once per chunk size, into the scratch database ``bench_search_quality`` (kept
between runs: a folder already indexed is reused). The 225 queries then go through
``apps.search.selectors.chunk_search``. Chunks are mapped to their document and a document counts
at its first (best) position. nDCG@10 uses exponential gain 2^g - 1 with the graded judgements of
``QRelsCorrectedforTRECeval`` (gains 1..4; anything else is not relevant).

Reference on this data (whole documents): BM25 0.363 / 0.738, MiniLM 0.368 / 0.772, their RRF
0.408 / 0.752 (nDCG@10 / recall@100). Targets: keyword >= 0.36, hybrid >= 0.42 and above both.

    .venv/bin/python bench/search_quality.py [--chunk-tokens 256 128] [--reindex]
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import time
from collections import defaultdict

from scratch import ROOT as BASE_DIR
from search_scratch import percentile, use_scratch_services

DATA = BASE_DIR.parent / "shared" / "data" / "cranfield"
DOCS_ROOT = BASE_DIR / "var" / "bench" / "cranfield"
SCRATCH_DB = "bench_search_quality"
DOCUMENTS = 1400
TOP_FOR_NDCG = 30  # chunks fetched for nDCG@10 (several may share a document); fusion depth stays 50
TOP_FOR_RECALL = 300  # chunks fetched for recall@100


def read_documents() -> dict[int, str]:
    """Title + text, as the reference figures were made (.W itself starts with the title again)."""
    text = (DATA / "cran.all.1400").read_text(encoding="latin-1")
    documents = {}
    for record in re.split(r"^\.I ", text, flags=re.MULTILINE)[1:]:
        fields = dict(re.findall(r"^\.([TABW])\n(.*?)(?=^\.[TABW]\n|\Z)", record, flags=re.MULTILINE | re.DOTALL))
        title, words = " ".join(fields.get("T", "").split()), " ".join(fields.get("W", "").split())
        documents[int(record.split(None, 1)[0])] = f"{title}\n\n{words}" if title else words
    return documents


def read_queries() -> list[str]:
    text = (DATA / "cran.qry").read_text(encoding="latin-1")
    return [" ".join(record.split("\n.W\n", 1)[1].split()) for record in re.split(r"^\.I ", text, flags=re.M)[1:]]


def read_judgements() -> dict[int, dict[int, int]]:
    judged: dict[int, dict[int, int]] = defaultdict(dict)
    for line in (DATA / "QRelsCorrectedforTRECeval").read_text().splitlines():
        query, _, doc, gain = line.split()
        if 1 <= int(gain) <= 4:
            judged[int(query)][int(doc)] = int(gain)
    return judged


def ndcg_at_10(ranked: list[int], gains: dict[int, int]) -> float:
    dcg = sum((2 ** gains.get(doc, 0) - 1) / math.log2(i + 2) for i, doc in enumerate(ranked[:10]))
    ideal = sorted(gains.values(), reverse=True)[:10]
    idcg = sum((2**gain - 1) / math.log2(i + 2) for i, gain in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_100(ranked: list[int], gains: dict[int, int]) -> float:
    return len(set(ranked[:100]) & gains.keys()) / len(gains) if gains else 0.0


def indexed_folder(chunk_tokens: int, documents: dict[int, str], *, reindex: bool) -> int:
    from django.contrib.auth import get_user_model
    from django.test import override_settings

    from apps.library.indexing import folder_index
    from apps.library.models import Chunk, File, Folder
    from apps.search.services import folder_lexeme_stats_refresh

    root = DOCS_ROOT / f"tokens-{chunk_tokens}"
    root.mkdir(parents=True, exist_ok=True)
    for number, text in documents.items():
        path = root / f"{number:04d}.txt"
        if not path.exists() or path.read_text() != text + "\n":
            path.write_text(text + "\n")
    owner, _ = get_user_model().objects.get_or_create(username="bench-search")
    folder, _ = Folder.objects.get_or_create(
        owner=owner, source="local", external_id=str(root), defaults={"name": f"cranfield-{chunk_tokens}"}
    )
    if reindex:
        File.objects.filter(folder=folder).delete()
    # Reconciles the folder with the files: only new or changed documents are indexed.
    started = time.perf_counter()
    with override_settings(CHUNK_TOKENS=chunk_tokens):
        result = folder_index(folder_id=folder.pk, inline=True)
    if result is not None and result.to_index:
        seconds = time.perf_counter() - started
        print(f"  indexed {len(result.to_index)} documents at {chunk_tokens} tokens in {seconds:.0f} s")
    started = time.perf_counter()
    stats = folder_lexeme_stats_refresh(folder_id=folder.pk)
    chunks = Chunk.objects.filter(folder=folder).count()
    print(
        f"  folder {folder.pk}: {chunks} chunks ({chunks / len(documents):.2f} per document), "
        f"lexeme statistics refreshed in {(time.perf_counter() - started) * 1000:.0f} ms "
        f"(avg length {stats.average_length:.1f} lexemes)"
    )
    return folder.pk


def ranked_documents(folder_id: int, query: str, vector, mode: str, k: int) -> tuple[list[int], float]:
    from apps.search.selectors import chunk_search

    started = time.perf_counter()
    hits = chunk_search(folder_id=folder_id, query=query, k=k, mode=mode, query_vector=vector)
    took = (time.perf_counter() - started) * 1000
    seen: dict[int, None] = {}
    for hit in hits:
        seen.setdefault(int(hit.path.split(".")[0]), None)
    return list(seen), took


def evaluate(folder_id: int, queries: list[str], judged: dict[int, dict[int, int]]) -> None:
    from apps.embeddings.providers import get_embedder
    from apps.search import selectors

    selectors.K_MAX = TOP_FOR_RECALL  # recall@100 needs 100 documents, i.e. more than 100 chunks
    vectors = get_embedder().embed_documents(queries)  # embedded once; search times exclude the model
    print(f"  {'mode':<8} {'nDCG@10':>8} {'recall@100':>11} {'p50 ms':>7} {'p95 ms':>7}")
    for mode in ["keyword", "vector", "hybrid"]:
        ndcgs, recalls, timings = [], [], []
        for number, (query, vector) in enumerate(zip(queries, vectors, strict=True), start=1):
            top, took = ranked_documents(folder_id, query, vector, mode, TOP_FOR_NDCG)
            deep, _ = ranked_documents(folder_id, query, vector, mode, TOP_FOR_RECALL)
            ndcgs.append(ndcg_at_10(top, judged.get(number, {})))
            recalls.append(recall_at_100(deep, judged.get(number, {})))
            timings.append(took)
        print(
            f"  {mode:<8} {statistics.mean(ndcgs):>8.3f} {statistics.mean(recalls):>11.3f} "
            f"{percentile(timings, 50):>7.1f} {percentile(timings, 95):>7.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--chunk-tokens",
        type=int,
        nargs="+",
        default=[512, 256, 128],
        help="512 keeps nearly every abstract whole (the model reads its first 256 tokens), as the reference did",
    )
    parser.add_argument("--reindex", action="store_true", help="drop and re-index the folders")
    args = parser.parse_args()
    use_scratch_services(SCRATCH_DB)
    documents, queries, judged = read_documents(), read_queries(), read_judgements()
    assert len(documents) == DOCUMENTS and len(queries) == 225, (len(documents), len(queries))
    print(f"Cranfield: {len(documents)} documents, {len(queries)} queries, {sum(map(len, judged.values()))} judgements")
    for chunk_tokens in args.chunk_tokens:
        print(f"\nchunks of {chunk_tokens} tokens")
        folder_id = indexed_folder(chunk_tokens, documents, reindex=args.reindex)
        evaluate(folder_id, queries, judged)


if __name__ == "__main__":
    main()

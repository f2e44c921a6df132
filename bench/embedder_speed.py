"""The default local embedder (MiniLM on ONNX Runtime) against sentence-transformers on torch.

Same process, same texts, same threads: chunks of the Cranfield abstracts (the project's own
chunker at CHUNK_TOKENS) are embedded by both, in alternating order (onnx, torch, torch, onnx)
so that load on a shared machine hits both alike; chunks/s is the mean of each one's two runs.
Then the cosine between the two embeddings of every text (min / mean), and the p50 / p95 of one
30-word question's embedding (the query side). Targets: onnx >= 2x torch at cosine >= 0.99;
query p50 < 10 ms.

``--quality`` also ranks the Cranfield and CACM documents by the vector leg alone (exact cosine
over each collection's chunks, a document at its best chunk) with both embedders: nDCG@10 must
stay within 0.005 of torch.

    .venv/bin/python bench/embedder_speed.py [--texts 400] [--threads N] [--quality]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
from ir_collections import COLLECTIONS, cranfield, ndcg_at_10

QUESTION = (
    "What experimental results are available on the heat transfer to a blunt body in hypersonic flow "
    "and how do they compare with the theory for laminar boundary layers at high Mach numbers?"
)


def chunks_of(documents: dict[int, str]) -> tuple[list[str], list[int]]:
    from apps.library.chunking import chunk_document
    from apps.library.parsing import ParsedDocument

    texts, owners = [], []
    for number, text in documents.items():
        for piece in chunk_document(document=ParsedDocument(text=text)):
            texts.append(piece.text)
            owners.append(number)
    return texts, owners


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


def alternate(embedders: dict[str, Callable[[list[str]], np.ndarray]], texts: list[str]) -> dict[str, np.ndarray]:
    """Each embedder twice, in the order a b b a; prints chunks/s per run and the mean."""
    seconds: dict[str, list[float]] = defaultdict(list)
    vectors = {}
    names = list(embedders)
    for name in [*names, *reversed(names)]:
        started = time.perf_counter()
        vectors[name] = embedders[name](texts)
        seconds[name].append(time.perf_counter() - started)
        print(f"  {name:<6} {len(texts) / seconds[name][-1]:7.1f} chunks/s   ({load()})")
    rates = {name: len(texts) / statistics.mean(runs) for name, runs in seconds.items()}
    for name, rate in rates.items():
        print(f"  {name:<6} mean {rate:7.1f} chunks/s")
    print(f"  onnx / torch: {rates['onnx'] / rates['torch']:.2f}x (target >= 2)")
    return vectors


def cosines(vectors: dict[str, np.ndarray]) -> None:
    cosine = np.sum(vectors["onnx"] * vectors["torch"], axis=1)
    print(f"  cosine onnx vs torch over {len(cosine)} texts: min {cosine.min():.5f} mean {cosine.mean():.6f}")


def query_latency(embed_query: Callable[[str], np.ndarray], label: str, *, runs: int) -> None:
    embed_query(QUESTION)
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        embed_query(QUESTION)
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    p50, p95 = timings[runs // 2], timings[runs * 95 // 100]
    print(f"  {label} query ({len(QUESTION.split())} words): p50 {p50:.2f} ms  p95 {p95:.2f} ms")


def quality(embedders: dict[str, Callable[[list[str]], np.ndarray]], collections: list[str]) -> None:
    for collection in collections:
        loaded = COLLECTIONS[collection]()
        documents, queries, judged = loaded.documents, loaded.queries, loaded.judged
        texts, owners = chunks_of(documents)
        print(f"\n{collection}: {len(documents)} documents, {len(texts)} chunks, {len(judged)} judged queries")
        owner_ids = np.asarray(owners)
        chunk_vectors = {}
        # Once each (the speed figures come from the alternating runs above), in turns.
        for name in sorted(embedders, reverse=collection == "cacm"):
            started = time.perf_counter()
            chunk_vectors[name] = embedders[name](texts)
            elapsed = time.perf_counter() - started
            print(f"  {name:<6} {len(texts) / elapsed:7.1f} chunks/s  {elapsed:6.0f} s   ({load()})")
        cosines(chunk_vectors)
        numbers = loaded.scored_queries()
        scores = {}
        for name, embed in embedders.items():
            query_vectors = embed([queries[number] for number in numbers])
            ndcgs = []
            for row, number in enumerate(numbers):
                similarity = chunk_vectors[name] @ query_vectors[row]
                ranked: list[int] = []
                for index in np.argsort(-similarity):
                    if owner_ids[index] not in ranked:
                        ranked.append(int(owner_ids[index]))
                        if len(ranked) == 10:
                            break
                ndcgs.append(ndcg_at_10(ranked, judged[number]))
            scores[name] = statistics.mean(ndcgs)
        delta = scores["onnx"] - scores["torch"]
        print(
            f"  vector-leg nDCG@10: onnx {scores['onnx']:.4f}  torch {scores['torch']:.4f}"
            f"  difference {delta:+.4f} (target within 0.005)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=400)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--collections", nargs="+", default=["cranfield", "cacm"], choices=["cranfield", "cacm"])
    args = parser.parse_args()
    # Both runtimes get the same threads (the setting the workers size to the cores).
    os.environ.update(EMBEDDING_THREADS=str(args.threads), DJANGO_SETTINGS_MODULE="config.settings")
    import django

    django.setup()
    from apps.embeddings.providers import get_embedder

    print(f"{args.threads} threads per embedder; {load()}")
    started = time.perf_counter()
    onnx = get_embedder("local")
    print(f"  onnx model loaded in {time.perf_counter() - started:.2f} s")
    started = time.perf_counter()
    torch = get_embedder("local_torch")
    print(f"  torch model loaded in {time.perf_counter() - started:.2f} s")
    embedders = {"onnx": onnx.embed_documents, "torch": torch.embed_documents}
    for embed in embedders.values():
        embed(["warm up the model"] * 8)

    if args.texts:
        speed(onnx, torch, embedders, count=args.texts)
    if args.quality:
        quality(embedders, args.collections)


def speed(onnx: Any, torch: Any, embedders: dict[str, Callable[[list[str]], np.ndarray]], *, count: int) -> None:
    texts = chunks_of(cranfield().documents)[0][:count]
    tokens = statistics.mean(len(t.ids) for t in onnx.tokenizer.encode_batch(texts))
    print(f"\n{len(texts)} Cranfield chunks, {tokens:.0f} word pieces on average:")
    cosines(alternate(embedders, texts))
    query_latency(onnx.embed_query, "onnx ", runs=200)
    query_latency(torch.embed_query, "torch", runs=40)


if __name__ == "__main__":
    main()

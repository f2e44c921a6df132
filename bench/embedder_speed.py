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
import math
import os
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
from scratch import ROOT

# Beside the main checkout; a worktree under wt/ finds it one level further up.
DATA = next((p for p in (ROOT.parent / "shared" / "data", ROOT.parent.parent / "shared" / "data") if p.exists()), ROOT)
QUESTION = (
    "What experimental results are available on the heat transfer to a blunt body in hypersonic flow "
    "and how do they compare with the theory for laminar boundary layers at high Mach numbers?"
)


def cranfield() -> tuple[dict[int, str], list[str], dict[int, dict[int, int]]]:
    text = (DATA / "cranfield" / "cran.all.1400").read_text(encoding="latin-1")
    documents = {}
    for record in re.split(r"^\.I ", text, flags=re.MULTILINE)[1:]:
        fields = dict(re.findall(r"^\.([TABW])\n(.*?)(?=^\.[TABW]\n|\Z)", record, flags=re.MULTILINE | re.DOTALL))
        title, words = " ".join(fields.get("T", "").split()), " ".join(fields.get("W", "").split())
        documents[int(record.split(None, 1)[0])] = f"{title}\n\n{words}" if title else words
    queries_text = (DATA / "cranfield" / "cran.qry").read_text(encoding="latin-1")
    queries = [" ".join(r.split("\n.W\n", 1)[1].split()) for r in re.split(r"^\.I ", queries_text, flags=re.M)[1:]]
    judged: dict[int, dict[int, int]] = defaultdict(dict)
    for line in (DATA / "cranfield" / "QRelsCorrectedforTRECeval").read_text().splitlines():
        query, _, doc, gain = line.split()
        if 1 <= int(gain) <= 4:
            judged[int(query)][int(doc)] = int(gain)
    return documents, queries, judged


def _cacm_records(path: str) -> dict[int, dict[str, str]]:
    text = (DATA / "cacm" / path).read_text(encoding="latin-1")
    records = {}
    for record in re.split(r"^\.I ", text, flags=re.MULTILINE)[1:]:
        number, _, body = record.partition("\n")
        fields = re.findall(r"^\.([A-Z])\n(.*?)(?=^\.[A-Z]\n|\Z)", body, flags=re.MULTILINE | re.DOTALL)
        records[int(number)] = {key: " ".join(value.split()) for key, value in fields}
    return records


def cacm() -> tuple[dict[int, str], list[str], dict[int, dict[int, int]]]:
    documents = {
        number: "\n\n".join(part for part in (f.get("T", ""), f.get("A", ""), f.get("W", "")) if part)
        for number, f in _cacm_records("cacm.all").items()
    }
    requests = _cacm_records("query.text")
    # Query n at index n - 1, as cranfield() lists them.
    queries = [requests.get(number, {}).get("W", "") for number in range(1, max(requests) + 1)]
    judged: dict[int, dict[int, int]] = defaultdict(dict)
    for line in (DATA / "cacm" / "qrels.text").read_text().splitlines():
        query, doc, *_ = line.split()
        judged[int(query)][int(doc)] = 1
    return documents, queries, judged


def ndcg_at_10(ranked: list[int], gains: dict[int, int]) -> float:
    dcg = sum((2 ** gains.get(doc, 0) - 1) / math.log2(i + 2) for i, doc in enumerate(ranked[:10]))
    ideal = sorted(gains.values(), reverse=True)[:10]
    idcg = sum((2**gain - 1) / math.log2(i + 2) for i, gain in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


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
    loaders = {"cranfield": cranfield, "cacm": cacm}
    for collection in collections:
        documents, queries, judged = loaders[collection]()
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
        numbers = [number for number in range(1, len(queries) + 1) if judged.get(number)]
        scores = {}
        for name, embed in embedders.items():
            query_vectors = embed([queries[number - 1] for number in numbers])
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
    documents, _, _ = cranfield()
    texts = chunks_of(documents)[0][:count]
    tokens = statistics.mean(len(t.ids) for t in onnx.tokenizer.encode_batch(texts))
    print(f"\n{len(texts)} Cranfield chunks, {tokens:.0f} word pieces on average:")
    cosines(alternate(embedders, texts))
    query_latency(onnx.embed_query, "onnx ", runs=200)
    query_latency(torch.embed_query, "torch", runs=40)


if __name__ == "__main__":
    main()

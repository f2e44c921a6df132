"""Hybrid search speed per folder size, two chunk-table layouts on the same rows: p50/p95, 1 and 8 clients, recall@10.

Loads ``--chunks`` synthetic chunks (bench/search/search_speed_data.py) into 100 folders of 100 to
200,000 chunks (scaled down with ``--chunks``), in the scratch database
``bench_search_speed_<chunks>``, into ``library_chunk`` as migrated (bench/search/search_speed_load.py,
timed). A ``buckets`` design also copies those rows, same ids, into ``bench_chunk_buckets``, laid
out as the table was before its hash partitions (bench/search/search_speed_buckets.py, timed). Both
are kept and reused by later runs with the same ``--chunks`` and ``--seed``.

``--designs`` picks what is measured on the same questions, folder size by folder size (single
client: the designs in turn question by question; 8 clients and recall: one design after the
other): ``partitions`` (library_chunk hash-partitioned by folder into 16, each partition with its own
HNSW graph, GIN index and btrees; the product's ``chunk_search``, iterative scans on pgvector >= 0.8),
``buckets`` (one plain table with 16 partial HNSW indexes by ``folder_id % 16``, a table-wide GIN
and the folder btree; the statement as of d2470bb), and each ``-overfetch`` (the same without
iterative scans, over-fetching ``ef_search``: the pgvector 0.6 path).

For the folder nearest each size: hybrid top-10 (the question vector is passed in, so model time
is not counted), single client and 8 concurrent clients; vector recall@10 against exact search
(numpy over the folder's vectors), for the vector side alone (k=10) and as hybrid runs it (depth
50, same ef_search); EXPLAIN (ANALYZE, BUFFERS) of each design's statement. Each layout's load and
index build times and sizes, the CPU and the load average are printed: other work on the 2 cores
inflates latencies. Targets: p95 <= 50 ms single client at every size, recall@10 >= 0.95.

    .venv/bin/python bench/search/search_speed.py --chunks 200000 --queries 50   # ~10 min, loads included
    .venv/bin/python bench/search/search_speed.py                                # 1,000,000: load ~1 h once
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from apps.library import chunk_partitions
from bench.common.machine import cpu, load_average
from bench.search import search_speed_buckets as buckets
from bench.search.common import percentile, use_scratch_services
from bench.search.search_speed_data import Corpus, folder_sizes
from bench.search.search_speed_load import (
    INDEXES,
    execute,
    forget_meta,
    layout_costs,
    load,
    loaded_meta,
    save_meta,
)

FOLDERS = 100
SMALLEST = 100
# 20k-30k: too large for an exact scan, a small share of any HNSW graph (apps/library/vector_index.py).
TARGET_SIZES = [100, 1_000, 10_000, 20_000, 30_000, 50_000, 100_000, 200_000]
CLIENTS = 8
K = 10
DEPTH = 50  # selectors.FUSION_DEPTH: what each side hands to the fusion in hybrid mode


@dataclass(frozen=True)
class Design:
    layout: str  # "partitions" (library_chunk) or "buckets" (bench_chunk_buckets)
    iterative: bool
    about: str


DESIGNS = {
    "partitions": Design(
        "partitions",
        True,
        "library_chunk: hash partitions by folder (16 as migrated), each with its own HNSW, GIN and btrees; "
        "the product's statement",
    ),
    "partitions-overfetch": Design("partitions", False, "the same, no iterative scans (the pgvector 0.6 path)"),
    "buckets": Design(
        "buckets",
        True,
        f"as of {buckets.COMMIT}: one table, 16 partial HNSW indexes by folder_id % 16, a table-wide GIN, the "
        f"folder btree; the statement as of {buckets.COMMIT}",
    ),
    "buckets-overfetch": Design("buckets", False, "the same, no iterative scans (the pgvector 0.6 path)"),
}
# The tables' short names for the vector and keyword methods.
SHORT = {"exact": "exact", "hnsw": "hnsw", "iterative": "iter", "scan": "scan", "index": "gin", "index_filter": "gin+f"}


@contextlib.contextmanager
def design_in_use(design: Design) -> Iterator[None]:
    """Planning as ``design`` has it: without iterative scans for the -overfetch designs."""
    from apps.search import planning

    saved = planning.pgvector_has_iterative_scans
    if not design.iterative:
        planning.pgvector_has_iterative_scans = lambda: False
    try:
        yield
    finally:
        planning.pgvector_has_iterative_scans = saved


def search(design: Design, folder_id: int, question: tuple[str, np.ndarray], *, k: int, mode: str) -> list[int]:
    from apps.search import planning
    from apps.search.selectors import chunk_search
    from apps.search.types import SearchMode

    text, vector = question
    if design.layout == "buckets":
        return buckets.bucket_search(
            folder_id=folder_id,
            query=text,
            k=k,
            mode=mode,
            query_vector=vector,
            iterative=planning.pgvector_has_iterative_scans(),
        )
    hits = chunk_search(folder_id=folder_id, query=text, k=k, mode=SearchMode(mode), query_vector=vector)
    return [hit.chunk_id for hit in hits]


def plan_name(design: Design, folder_id: int, size: int) -> str:
    """The vector and keyword methods a hybrid top-10 takes in the folder, e.g. ``iter300/gin+f``."""
    from apps.search import planning

    if design.layout == "buckets":
        iterative = planning.pgvector_has_iterative_scans()
        vector = buckets.bucket_vector_plan(
            folder_id=folder_id, folder_rows=size, k=K, depth=DEPTH, iterative=iterative
        )
        keyword = planning.keyword_plan(folder_rows=size, partition_rows=buckets.table_rows())
    else:
        plan = planning.search_plan(folder_id=folder_id, folder_rows=size, k=K, depth=DEPTH)
        vector, keyword = plan.vector, plan.keyword
    ef = "" if vector.method.value == "exact" else str(vector.ef_search)
    return f"{SHORT[vector.method.value]}{ef}/{SHORT[keyword.method.value]}"


def exact_top(folder_id: int, vectors_by_folder: dict, question: np.ndarray, k: int) -> list[int]:
    ids, matrix = vectors_by_folder[folder_id]
    scores = matrix @ question
    top = np.argpartition(-scores, k)[:k] if len(scores) > k else np.arange(len(scores))
    return [int(ids[i]) for i in top[np.argsort(-scores[top])]]


def folder_vectors(folder_id: int) -> tuple[np.ndarray, np.ndarray]:
    from django.db import connection
    from pgvector.psycopg import register_vector

    connection.ensure_connection()
    register_vector(connection.connection)
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, embedding FROM library_chunk WHERE folder_id = %s", [folder_id])
        rows = cursor.fetchall()
    return np.array([r[0] for r in rows]), np.stack([np.asarray(r[1], dtype=np.float32) for r in rows])


class StatementRecorder:
    """Keeps the search's statements and their parameters, for EXPLAIN ANALYZE."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def __call__(self, execute, sql, params, many, context):
        self.calls.append((sql, params))
        return execute(sql, params, many, context)


def explain(design: Design, folder_id: int, question: tuple[str, np.ndarray]) -> str:
    from django.db import connection, transaction

    recorder = StatementRecorder()
    with connection.execute_wrapper(recorder):
        search(design, folder_id, question, k=K, mode="hybrid")
    settings = [call for call in recorder.calls if "set_config" in call[0]]
    search_sql, search_params = recorder.calls[-1]
    with transaction.atomic(), connection.cursor() as cursor:
        for sql, params in settings:
            cursor.execute(sql, params)
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + search_sql, search_params)
        return "\n".join(f"    {row[0]}" for row in cursor.fetchall())


def timed(design: Design, folder_id: int, question: tuple[str, np.ndarray]) -> float:
    with design_in_use(design):
        started = time.perf_counter()
        search(design, folder_id, question, k=K, mode="hybrid")
        return (time.perf_counter() - started) * 1000


def single_client(names: list[str], folder_id: int, questions: list) -> dict[str, list[float]]:
    """Each question through every design in turn (alternating which goes first), so that bursts of
    other work on the machine fall on all designs alike; after a warming pass (the folder's pages
    and the index paths these questions take, as a live server has them)."""
    for name in names:
        for question in questions:
            timed(DESIGNS[name], folder_id, question)
    times: dict[str, list[float]] = {name: [] for name in names}
    for i, question in enumerate(questions):
        for name in names if i % 2 == 0 else names[::-1]:
            times[name].append(timed(DESIGNS[name], folder_id, question))
    return times


def measure(design: Design, folder_id: int, size: int, questions: list, truths: list[set[int]], single: list) -> dict:
    """8 concurrent clients, then recall, for one design (``single``: its single-client times)."""
    from django.db import connection

    def client(batch: list) -> list[float]:
        try:
            return [timed(design, folder_id, question) for question in batch]
        finally:
            connection.close()

    started = time.perf_counter()
    with design_in_use(design), ThreadPoolExecutor(CLIENTS) as pool:
        concurrent = [t for result in pool.map(client, [questions[i::CLIENTS] for i in range(CLIENTS)]) for t in result]
    throughput = len(questions) / (time.perf_counter() - started)

    recalls_k10, recalls_depth = [], []
    with design_in_use(design):
        for question, truth in zip(questions, truths, strict=False):
            found = search(design, folder_id, question, k=K, mode="vector")
            recalls_k10.append(len(truth & set(found)) / len(truth))
            # The vector side as hybrid runs it: DEPTH candidates deep (the fusion depth), so the same ef_search.
            deep = search(design, folder_id, question, k=DEPTH, mode="vector")
            recalls_depth.append(len(truth & set(deep[:K])) / len(truth))
        plan = plan_name(design, folder_id, size)
    return {
        "size": size,
        "plan": plan,
        "p50": percentile(single, 50),
        "p95": percentile(single, 95),
        "c_p50": percentile(concurrent, 50),
        "c_p95": percentile(concurrent, 95),
        "qps": throughput,
        "recall10": float(np.mean(recalls_k10)),
        "recall_depth": float(np.mean(recalls_depth)),
    }


def loaded_layouts(args: argparse.Namespace, corpus: Corpus, sizes: list[int], layouts: set[str]) -> dict[str, dict]:
    """Each layout's rows, loaded unless a previous run left them; its costs (layout_costs)."""
    key = f"loaded:{args.chunks}:{args.seed}"
    timings = None if args.reload else loaded_meta(key)
    if timings is None:
        # New rows: a copy of the old ones in the buckets table would be stale.
        forget_meta(f"buckets:{args.chunks}:")
        execute(f"DROP TABLE IF EXISTS {buckets.TABLE}")
        print(f"loading {args.chunks:,} chunks into {FOLDERS} folders of {sizes[0]:,}..{sizes[-1]:,} chunks")
        timings = load(corpus, sizes, key, partitions=args.partitions)
    print("load timings:", json.dumps(timings))
    costs = {"partitions": layout_costs("partitions", timings, INDEXES)}
    if "buckets" in layouts:
        bucket_key = f"buckets:{args.chunks}:{args.seed}"
        bucket_timings = loaded_meta(bucket_key)
        if bucket_timings is None or not execute("SELECT to_regclass(%s)", [buckets.TABLE])[0][0]:
            print(f"copying the rows into {buckets.TABLE}, laid out as of {buckets.COMMIT}")
            bucket_timings = buckets.buckets_load()
            save_meta(bucket_key, bucket_timings)
        costs["buckets"] = layout_costs("buckets", bucket_timings, buckets.INDEXES)
    for layout in costs:
        execute(f"ANALYZE {'library_chunk' if layout == 'partitions' else buckets.TABLE}")
    return {layout: costs[layout] for layout in costs if layout in layouts}


def print_costs(costs: dict[str, dict]) -> None:
    print(
        f"\n{'layout':<11} {'rows written':<22} {'HNSW':>7} {'GIN':>6} {'btree':>6} {'vacuum':>7} | "
        f"{'heap':>6} {'HNSW':>6} {'GIN':>6} {'btree':>6}  (build s | MiB)"
    )
    for layout, c in costs.items():
        build, mib = c["build_seconds"], c["index_mib"]
        print(
            f"{layout:<11} {c['rows_seconds']:>6.1f} s {c['rows_how']:<13} {build['hnsw']:>7.1f} {build['gin']:>6.1f}"
            f" {build['btree']:>6.1f} {c['vacuum_analyze']:>7.1f} | {c['heap_mib']:>6.0f} {mib['hnsw']:>6.0f}"
            f" {mib['gin']:>6.0f} {mib['btree']:>6.0f}"
        )


def print_side_by_side(designs: list[str], results: dict[str, list[dict]]) -> None:
    columns = f"{'plan':>14} {'p50':>6} {'p95':>6} {'8c p95':>7} {'q/s':>5} {'R@10':>6}"
    width = len(columns)
    print("\n" + " " * 8 + "".join(f" | {name:<{width}}" for name in designs))
    print(f"{'chunks':>8}" + f" | {columns}" * len(designs))
    for row in zip(*(results[name] for name in designs), strict=True):
        cells = [
            f"{r['plan']:>14} {r['p50']:>6.1f} {r['p95']:>6.1f} {r['c_p95']:>7.1f} {r['qps']:>5.0f}"
            f" {r['recall10']:>6.3f}"
            for r in row
        ]
        print(f"{row[0]['size']:>8,}" + "".join(f" | {cell}" for cell in cells))


def database_name(chunks: int, partitions: int) -> str:
    suffix = "" if partitions == chunk_partitions.PARTITIONS else f"_p{partitions}"
    return f"bench_search_speed_{chunks}{suffix}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200, help="per folder size")
    parser.add_argument("--reload", action="store_true")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=TARGET_SIZES, help="folder sizes measured (the nearest each)"
    )
    parser.add_argument("--no-explain", action="store_true")
    parser.add_argument(
        "--partitions",
        type=int,
        default=chunk_partitions.PARTITIONS,
        help="hash partitions of library_chunk (default: the product's); another count loads into a "
        "database of its own, bench_search_speed_<chunks>_p<count>",
    )
    parser.add_argument(
        "--designs", nargs="+", choices=list(DESIGNS), default=["buckets", "partitions"], help="measured in this order"
    )
    parser.add_argument(
        "--exact-max-rows",
        type=int,
        help="folders above this use HNSW (default: the planner's); lower it to see a folder's share of a "
        "larger table, e.g. at 200k chunks a folder of 1k holds the share a folder of 5k holds at 1M",
    )
    parser.add_argument(
        "--keyword-cap",
        type=int,
        help="keyword candidates a GIN-searched folder ranks (default: selectors.KEYWORD_CANDIDATE_CAP)",
    )
    args = parser.parse_args()
    designs = list(dict.fromkeys(args.designs))
    use_scratch_services(database_name(args.chunks, args.partitions), embedding_provider="hash")
    if args.exact_max_rows is not None:
        from apps.search import planning

        planning.EXACT_MAX_ROWS = args.exact_max_rows
    if args.keyword_cap is not None:
        from apps.search import selectors

        selectors.KEYWORD_CANDIDATE_CAP = args.keyword_cap
    largest = min(200_000, args.chunks // 5)
    sizes = folder_sizes(total=args.chunks, count=FOLDERS, smallest=SMALLEST, largest=largest)
    corpus = Corpus.build(seed=args.seed, sizes=sizes)
    costs = loaded_layouts(args, corpus, sizes, {DESIGNS[name].layout for name in designs})
    (version,) = execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")[0]
    partitions = len(chunk_partitions.chunk_partition_sizes())
    print(f"\n{cpu()}\npgvector {version}; library_chunk in {partitions} hash partitions")
    for name in designs:
        print(f"  {name}: {DESIGNS[name].about}")
    print_costs(costs)
    print(f"\nbefore measuring: {load_average()}", flush=True)

    from apps.library.models import Folder

    folders = {int(f.name.split("-")[2]): (f.pk, int(f.name.split("-")[1])) for f in Folder.objects.all()}
    chosen = sorted({min(folders, key=lambda size: abs(size - target)) for target in args.sizes if target <= largest})
    rng = np.random.default_rng(args.seed + 2)
    results: dict[str, list[dict]] = {name: [] for name in designs}
    plans: list[tuple[str, int, str]] = []
    for size in chosen:
        folder_id, position = folders[size]
        questions = corpus.questions(rng, position, args.queries)
        vectors_by_folder = {folder_id: folder_vectors(folder_id)}
        truths = [set(exact_top(folder_id, vectors_by_folder, vector, K)) for _, vector in questions[:50]]
        single = single_client(designs, folder_id, questions)
        for name in designs:
            r = measure(DESIGNS[name], folder_id, size, questions, truths, single[name])
            if not args.no_explain:
                with design_in_use(DESIGNS[name]):
                    plans.append((name, size, explain(DESIGNS[name], folder_id, questions[0])))
            results[name].append(r)
            print(
                f"{name:>20}, folder of {size:>7,} chunks ({r['plan']}): single p50 {r['p50']:.1f} ms p95 "
                f"{r['p95']:.1f} ms | {CLIENTS} clients p50 {r['c_p50']:.1f} ms p95 {r['c_p95']:.1f} ms "
                f"{r['qps']:.0f} q/s | vector recall@10 {r['recall10']:.3f} (k=10), {r['recall_depth']:.3f} (depth 50)",
                flush=True,
            )
    print_side_by_side(designs, results)
    print(f"(ms; 8c: {CLIENTS} concurrent clients; R@10: vector recall@10 at k=10; {cpu()})")
    print(f"after measuring: {load_average()}")
    for name, size, plan in plans:
        print(f"\nEXPLAIN (ANALYZE, BUFFERS), {name}, hybrid top-10, folder of {size:,} chunks:\n{plan}")


if __name__ == "__main__":
    main()

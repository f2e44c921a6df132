"""The vector leg alone over each kind of HNSW index, with pgvector 0.8's iterative scans, same questions.

On search_speed.py's loaded rows, both on the partitioned table (one graph per partition):
"halfvec", the product's index, over ``embedding::halfvec(384)`` (halfvec_cosine_ops, two bytes a
dimension; library/0017), and "partition", one over ``embedding`` (vector_cosine_ops), the
product's index until library/0017. Whichever the database lacks is built here (timed) and
dropped after, so the bench runs on rows loaded before library/0017 too. Every query is
vector top-10 of one folder with ``hnsw.iterative_scan = relaxed_order`` and ``ef_search`` at planning.EF_SEARCH_MIN
(the planner's ``iterative`` plan), and the index is made the only way in (sorting and bitmap
scans off): the planner would otherwise answer mid-sized folders from the folder btree with an
exact sort. For every measured folder size, exact
ones included (their share of the table is what a larger folder has at 1M): p50/p95 and
recall@10 against exact search (numpy), the index actually used, plus build time and size.
The table keeps ``vector`` storage (a halfvec column would halve it too). Needs the rows and
indexes of search_speed.py (same ``--chunks``). (Before the partitions this bench compared 16
partial indexes by ``folder_id % 16`` with table-wide ones.)

    .venv/bin/python bench/search/search_halfvec.py --chunks 200000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from apps.library.vector_index import DEFINITION, HALFVEC
from bench.search.common import percentile, use_scratch_services
from bench.search.search_speed import TARGET_SIZES, exact_top, execute, folder_vectors, loaded_meta
from bench.search.search_speed_data import Corpus, folder_sizes

# kind: its operator class, the index the bench builds when the database has none of that class,
# and the distance a search orders by to use it.
KINDS = {
    "partition": ("vector_cosine_ops", "USING hnsw (embedding vector_cosine_ops)", "embedding <=> %s::vector"),
    "halfvec": ("halfvec_cosine_ops", DEFINITION, f"embedding::{HALFVEC} <=> %s::{HALFVEC}"),
}
# The table's HNSW index of an operator class (the parent's, on the partitioned table).
_INDEX_OF_CLASS = """
SELECT c.relname::text FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_opclass o ON o.oid = i.indclass[0]
WHERE i.indrelid = 'library_chunk'::regclass AND o.opcname = %s AND i.indpred IS NULL"""
FOLDERS = 100
SMALLEST = 100


def index_mib(name: str) -> float:
    """A partitioned index's size: its partitions' indexes together."""
    (size,) = execute("SELECT coalesce(sum(pg_relation_size(relid)), 0) FROM pg_partition_tree(%s::regclass)", [name])[
        0
    ]
    return size / 2**20


def statement(kind: str, distance: str) -> str:
    # The folder condition prunes the scan to the folder's partition, as the search does.
    return f"SELECT id FROM library_chunk WHERE folder_id = %s ORDER BY {distance} LIMIT 10"


def params(kind: str, folder_id: int, vector: np.ndarray) -> list:
    literal = "[" + ",".join(f"{x:.7f}" for x in vector) + "]"
    return [folder_id, literal]


def top10(kind: str, distance: str, folder_id: int, vector: np.ndarray) -> list[int]:
    return [row[0] for row in execute(statement(kind, distance), params(kind, folder_id, vector))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    use_scratch_services(f"bench_search_speed_{args.chunks}", embedding_provider="hash")
    if loaded_meta(f"loaded:{args.chunks}:{args.seed}") is None:
        raise SystemExit(f"load the rows first: .venv/bin/python bench/search/search_speed.py --chunks {args.chunks}")
    largest = min(200_000, args.chunks // 5)
    sizes = folder_sizes(total=args.chunks, count=FOLDERS, smallest=SMALLEST, largest=largest)
    corpus = Corpus.build(seed=args.seed, sizes=sizes)

    from apps.library.models import Folder
    from apps.search.planning import EF_SEARCH_MIN

    folders = {int(f.name.split("-")[2]): (f.pk, int(f.name.split("-")[1])) for f in Folder.objects.all()}
    chosen = sorted({min(folders, key=lambda size: abs(size - t)) for t in TARGET_SIZES if t <= largest})
    execute("SET maintenance_work_mem = '6GB'")
    built_here = []
    for kind, (opclass, definition, _) in KINDS.items():
        execute(f"DROP INDEX IF EXISTS bench_hnsw_{kind}")  # left by a run that stopped
        existing = execute(_INDEX_OF_CLASS, [opclass])
        if existing:
            name = existing[0][0]
            print(f"{kind:>8}: {name}, in place, {index_mib(name):.0f} MiB over the partitions", flush=True)
            continue
        name = f"bench_hnsw_{kind}"
        started = time.perf_counter()
        execute(f"CREATE INDEX {name} ON library_chunk {definition}")
        built = time.perf_counter() - started
        built_here.append(name)
        print(f"{kind:>8}: built in {built:.1f} s, {index_mib(name):.0f} MiB over the partitions", flush=True)
    execute("ANALYZE library_chunk")
    execute("SET hnsw.iterative_scan = relaxed_order")
    execute("SET hnsw.ef_search = %s", [EF_SEARCH_MIN])
    execute("SET enable_sort = off")
    execute("SET enable_bitmapscan = off")
    rng = np.random.default_rng(args.seed + 2)
    print(f"\n{'chunks':>8} {'share':>6} {'kind':>8} {'p50':>6} {'p95':>6} {'R@10':>6}  index used")
    try:
        for size in chosen:
            folder_id, position = folders[size]
            vectors_by_folder = {folder_id: folder_vectors(folder_id)}
            questions = corpus.questions(rng, position, args.queries)
            truths = [set(exact_top(folder_id, vectors_by_folder, vector, 10)) for _, vector in questions]
            for kind, (_, _, distance) in KINDS.items():
                plan = execute("EXPLAIN " + statement(kind, distance), params(kind, folder_id, questions[0][1]))
                used = next((row[0].split(" using ")[1].split()[0] for row in plan if " using " in row[0]), "none")
                for _, vector in questions[:10]:
                    top10(kind, distance, folder_id, vector)  # warm
                times, recalls = [], []
                for (_, vector), truth in zip(questions, truths, strict=True):
                    started = time.perf_counter()
                    found = top10(kind, distance, folder_id, vector)
                    times.append((time.perf_counter() - started) * 1000)
                    recalls.append(len(truth & set(found)) / len(truth))
                print(
                    f"{size:>8,} {size / args.chunks:>6.1%} {kind:>8} {percentile(times, 50):>6.1f}"
                    f" {percentile(times, 95):>6.1f} {np.mean(recalls):>6.3f}  {used}",
                    flush=True,
                )
    finally:
        for name in built_here:
            execute(f"DROP INDEX IF EXISTS {name}")


if __name__ == "__main__":
    main()

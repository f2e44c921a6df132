"""``halfvec`` against ``vector`` for the chunk embeddings' HNSW index, on search_speed.py's rows.

Same run, same questions: one table-wide HNSW index over ``embedding`` (vector_cosine_ops)
against one over ``embedding::halfvec(384)`` (halfvec_cosine_ops, half the bytes per dimension),
both searched with pgvector 0.8's iterative scans as the planner's ``iterative`` plan sets them
(relaxed_order, ef_search 300). For the folders of search_speed.py's sizes above the exact-scan
limit: vector-only top-10 p50/p95 and recall@10 against exact search (numpy), plus build time
and index size. The table itself keeps ``vector`` storage (a halfvec column would halve it too).
Needs the database search_speed.py loaded (``--chunks`` the same); both indexes are dropped after.

    .venv/bin/python bench/search_halfvec.py --chunks 200000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from search_scratch import percentile, use_scratch_services
from search_speed import TARGET_SIZES, exact_top, execute, folder_vectors, loaded_meta
from search_speed_data import Corpus, folder_sizes

KINDS = {
    "vector": (
        "CREATE INDEX bench_hnsw_vector ON library_chunk USING hnsw (embedding vector_cosine_ops)",
        "embedding <=> %s::vector",
    ),
    "halfvec": (
        "CREATE INDEX bench_hnsw_halfvec ON library_chunk USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops)",
        "embedding::halfvec(384) <=> %s::halfvec(384)",
    ),
}
FOLDERS = 100
SMALLEST = 100


def top10(folder_id: int, distance: str, vector: np.ndarray) -> list[int]:
    literal = "[" + ",".join(f"{x:.7f}" for x in vector) + "]"
    rows = execute(
        f"SELECT id FROM library_chunk WHERE folder_id = %s ORDER BY {distance} LIMIT 10", [folder_id, literal]
    )
    return [row[0] for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    use_scratch_services(f"bench_search_speed_{args.chunks}", embedding_provider="hash")
    if loaded_meta(f"loaded:{args.chunks}:{args.seed}") is None:
        raise SystemExit(f"load the rows first: .venv/bin/python bench/search_speed.py --chunks {args.chunks}")
    largest = min(200_000, args.chunks // 5)
    sizes = folder_sizes(total=args.chunks, count=FOLDERS, smallest=SMALLEST, largest=largest)
    corpus = Corpus.build(seed=args.seed, sizes=sizes)

    from apps.library.models import Folder
    from apps.search.planning import EF_SEARCH_MIN, EXACT_MAX_ROWS

    folders = {int(f.name.split("-")[2]): (f.pk, int(f.name.split("-")[1])) for f in Folder.objects.all()}
    chosen = sorted({min(folders, key=lambda size: abs(size - t)) for t in TARGET_SIZES if t <= largest})
    chosen = [size for size in chosen if size > EXACT_MAX_ROWS]
    execute("SET maintenance_work_mem = '6GB'")
    for kind, (ddl, _) in KINDS.items():
        name = ddl.split()[2]
        execute(f"DROP INDEX IF EXISTS {name}")
        started = time.perf_counter()
        execute(ddl)
        built = time.perf_counter() - started
        (size,) = execute("SELECT pg_relation_size(%s::regclass)", [name])[0]
        print(f"{kind:>8}: table-wide HNSW built in {built:.1f} s, {size / 2**20:.0f} MiB", flush=True)
    execute("ANALYZE library_chunk")
    execute("SET hnsw.iterative_scan = relaxed_order")
    execute("SET hnsw.ef_search = %s", [EF_SEARCH_MIN])
    rng = np.random.default_rng(args.seed + 2)
    print(f"\n{'chunks':>8} {'kind':>8} {'p50':>6} {'p95':>6} {'R@10':>6}  index used")
    try:
        for size in chosen:
            folder_id, position = folders[size]
            vectors_by_folder = {folder_id: folder_vectors(folder_id)}
            questions = corpus.questions(rng, position, args.queries)
            truths = [set(exact_top(folder_id, vectors_by_folder, vector, 10)) for _, vector in questions]
            for kind, (_, distance) in KINDS.items():
                literal = "[" + ",".join(f"{x:.7f}" for x in questions[0][1]) + "]"
                plan = execute(
                    f"EXPLAIN SELECT id FROM library_chunk WHERE folder_id = %s ORDER BY {distance} LIMIT 10",
                    [folder_id, literal],
                )
                used = next((row[0].split(" using ")[1].split()[0] for row in plan if " using " in row[0]), "none")
                for _, vector in questions[:10]:
                    top10(folder_id, distance, vector)  # warm
                times, recalls = [], []
                for (_, vector), truth in zip(questions, truths, strict=True):
                    started = time.perf_counter()
                    found = top10(folder_id, distance, vector)
                    times.append((time.perf_counter() - started) * 1000)
                    recalls.append(len(truth & set(found)) / len(truth))
                print(
                    f"{size:>8,} {kind:>8} {percentile(times, 50):>6.1f} {percentile(times, 95):>6.1f}"
                    f" {np.mean(recalls):>6.3f}  {used}",
                    flush=True,
                )
    finally:
        for ddl, _ in KINDS.values():
            execute(f"DROP INDEX IF EXISTS {ddl.split()[2]}")


if __name__ == "__main__":
    main()

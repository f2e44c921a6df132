"""The largest folder's vector recall in its partition: the product's HNSW graph against graphs built
with other ``ef_construction`` values on a copy of the same partition's rows.

Runs on a database search_speed.py loaded (``--chunks``, ``--partitions``; 5M in 32 partitions by
default). Finds the partition of the folder of ``--folder-size`` chunks, copies the partition's ids,
folders and embeddings into ``bench_partition_graph``, and for each ``--ef-construction`` builds the
product's index definition (halfvec, cosine, m 16) with that value, then asks ``--queries`` of
search_speed_data.py's questions for the folder, as the vector leg does (folder filter, iterative
scans, ``ef_search`` 500): recall@10 against exact search (numpy), its minimum over the questions,
p50/p95, build seconds and index size. The product's own graph (built when the rows were loaded) is
asked the same questions first. The copy is dropped at the end. Prints the CPU and the load average.

    .venv/bin/python bench/search/partition_graph.py [--chunks 5000000] [--partitions 32] [--ef-construction 64 128]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.common.machine import cpu, load_average
from bench.search.common import use_scratch_services
from bench.search.search_speed import FOLDERS, SMALLEST, database_name
from bench.search.search_speed_data import Corpus, folder_sizes
from bench.search.search_speed_load import execute

COPY = "bench_partition_graph"
EF_SEARCH = 500
K = 10
NEAREST = (
    f"SELECT id FROM {{table}} WHERE folder_id = %s ORDER BY embedding::halfvec(384) <=> %s::halfvec(384) LIMIT {K}"
)


def asked(table: str, folder_id: int, questions: list[np.ndarray], truths: list[set[int]]) -> dict:
    from django.db import connection, transaction

    recalls, times = [], []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), set_config('hnsw.iterative_scan', 'relaxed_order', true),"
            " set_config('enable_seqscan', 'off', true)",
            [str(EF_SEARCH)],
        )
        for question, truth in zip(questions, truths, strict=True):
            started = time.perf_counter()
            cursor.execute(NEAREST.format(table=table), [folder_id, question])
            found = {row[0] for row in cursor.fetchall()}
            times.append((time.perf_counter() - started) * 1000)
            recalls.append(len(truth & found) / K)
    return {
        "recall": float(np.mean(recalls)),
        "worst": min(recalls),
        "p50": float(np.percentile(times, 50)),
        "p95": float(np.percentile(times, 95)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=32)
    parser.add_argument("--seed", type=int, default=5, help="search_speed.py's --seed of that database")
    parser.add_argument("--folder-size", type=int, default=200_000, help="the folder nearest this size")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--ef-construction", type=int, nargs="+", default=[64, 128])
    args = parser.parse_args()
    use_scratch_services(database_name(args.chunks, args.partitions), embedding_provider="hash")
    from django.db import connection
    from pgvector.psycopg import register_vector

    connection.ensure_connection()
    register_vector(connection.connection)
    largest = min(200_000, args.chunks // 5)
    sizes = folder_sizes(total=args.chunks, count=FOLDERS, smallest=SMALLEST, largest=largest)
    corpus = Corpus.build(seed=args.seed, sizes=sizes)
    folders = [(pk, name) for pk, name in execute("SELECT id, name FROM library_folder")]
    folder_id, name = min(folders, key=lambda f: abs(int(f[1].split("-")[2]) - args.folder_size))
    position = int(name.split("-")[1])
    questions = [
        vector for _, vector in corpus.questions(np.random.default_rng(args.seed + 99), position, args.queries)
    ]
    (partition,) = execute(
        "SELECT tableoid::regclass::text FROM library_chunk WHERE folder_id = %s LIMIT 1", [folder_id]
    )[0]
    rows = execute("SELECT id, embedding FROM library_chunk WHERE folder_id = %s", [folder_id])
    ids = np.array([row[0] for row in rows])
    matrix = np.stack([np.asarray(row[1], dtype=np.float32) for row in rows])
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    truths = [set(ids[np.argsort(-(matrix @ (q / np.linalg.norm(q))))[:K]].tolist()) for q in questions]
    (partition_rows,) = execute(f"SELECT count(*) FROM {partition}")[0]
    print(f"{cpu()}\n{name}: {len(ids):,} chunks in {partition} ({partition_rows:,} rows); {args.queries} questions")
    print(f"{load_average()}")

    product = asked("library_chunk", folder_id, questions, truths)
    print(
        f"the product's graph (ef_construction 64, built with the load): recall@10 {product['recall']:.3f}"
        f" (worst question {product['worst']:.1f}), p50 {product['p50']:.1f} ms, p95 {product['p95']:.1f} ms"
    )
    execute(f"DROP TABLE IF EXISTS {COPY}")
    execute(f"CREATE TABLE {COPY} AS SELECT id, folder_id, embedding FROM {partition}")
    execute("SET maintenance_work_mem = '3GB'")
    try:
        for ef_construction in args.ef_construction:
            execute(f"DROP INDEX IF EXISTS {COPY}_hnsw")
            started = time.perf_counter()
            execute(
                f"CREATE INDEX {COPY}_hnsw ON {COPY} USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops)"
                f" WITH (m = 16, ef_construction = {int(ef_construction)})"
            )
            build = time.perf_counter() - started
            execute(f"ANALYZE {COPY}")
            (size,) = execute(f"SELECT pg_relation_size('{COPY}_hnsw')")[0]
            r = asked(COPY, folder_id, questions, truths)
            print(
                f"a copy, ef_construction {ef_construction:>3}: build {build:6.1f} s, {size / 2**20:5.0f} MiB,"
                f" recall@10 {r['recall']:.3f} (worst question {r['worst']:.1f}),"
                f" p50 {r['p50']:.1f} ms, p95 {r['p95']:.1f} ms; {load_average()}",
                flush=True,
            )
    finally:
        execute(f"DROP TABLE IF EXISTS {COPY}")


if __name__ == "__main__":
    main()

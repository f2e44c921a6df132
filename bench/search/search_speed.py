"""Hybrid search speed at a million chunks: p50/p95 per folder size, 1 and 8 clients, vector recall@10.

Loads ``--chunks`` synthetic chunks (bench/search/search_speed_data.py) into 100 folders of 100 to
200,000 chunks (scaled down with ``--chunks``), in the scratch database
``bench_search_speed_<chunks>``: files and folders through the ORM, chunks by binary COPY with the
tsvector trigger on and the search indexes dropped, then the indexes built as migration
library/0002 and 0006 define them (timed) and the per-folder lexeme statistics refreshed (timed). The
loaded database is kept and reused by later runs with the same ``--chunks`` and ``--seed``.

Then, for the folder nearest each size: hybrid top-10 through ``chunk_search`` (the question
vector is passed in, so model time is not counted), single client and 8 concurrent clients;
vector recall@10 against exact search (numpy over the folder's vectors), for the vector side
alone (k=10) and as hybrid runs it (depth 50, same ef_search); EXPLAIN ANALYZE of the statements
relied on. The machine's load average is printed: other work on its 2 cores inflates latencies.
Targets: p95 <= 50 ms single client at every size, recall@10 >= 0.95.

    .venv/bin/python bench/search/search_speed.py --chunks 100000       # a few minutes
    .venv/bin/python bench/search/search_speed.py                       # 1,000,000: load ~1 h once

``--design`` picks the HNSW layout measured, on the same loaded rows (indexes built when missing,
the others dropped): ``buckets`` (16 partial indexes, as migrated), ``buckets-overfetch`` (the
same without iterative scans, the pgvector 0.6 path) or ``table`` (one table-wide index with
pgvector 0.8's iterative scans).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from apps.library import vector_index
from bench.search.common import percentile, use_scratch_services
from bench.search.search_speed_data import Corpus, file_specs, folder_sizes

FOLDERS = 100
SMALLEST = 100
# 20k-30k: too large for an exact scan, a small share of any HNSW graph (apps/library/vector_index.py).
TARGET_SIZES = [100, 1_000, 10_000, 20_000, 30_000, 50_000, 100_000, 200_000]
CLIENTS = 8
COPY_BATCH_FILES = 2000
# As apps/library/migrations/0002 and 0006 build them (without CONCURRENTLY: nobody else uses this
# database): dropped before the load, built after it.
INDEXES = {
    "library_chunk_folder_idx": "CREATE INDEX library_chunk_folder_idx ON library_chunk (folder_id)",
    "library_chunk_search_vector_gin": "CREATE INDEX library_chunk_search_vector_gin ON library_chunk "
    "USING gin (search_vector)",
    "library_chunk_search_vector_null": "CREATE INDEX library_chunk_search_vector_null ON library_chunk (id) "
    "WHERE search_vector IS NULL",
    **{
        vector_index.index_name(bucket): vector_index.create_index_sql(bucket, concurrently=False)
        for bucket in range(vector_index.BUCKETS)
    },
}
COPY_CHUNKS = (
    "COPY library_chunk (file_id, folder_id, chunk_index, text, embedding, location, token_count) "
    "FROM STDIN (FORMAT BINARY)"
)


def execute(sql: str, params: list | None = None) -> list[tuple]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def loaded_meta(key: str) -> dict | None:
    execute("CREATE TABLE IF NOT EXISTS bench_meta (key text PRIMARY KEY, value jsonb NOT NULL)")
    rows = execute("SELECT value FROM bench_meta WHERE key = %s", [key])
    return (json.loads(rows[0][0]) if isinstance(rows[0][0], str) else rows[0][0]) if rows else None


def load(corpus: Corpus, sizes: list[int], key: str) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from pgvector.psycopg import register_vector
    from psycopg.types.json import Jsonb

    from apps.library.models import File, Folder
    from apps.search.services import folder_lexeme_stats_refresh

    timings: dict = {}
    execute("TRUNCATE library_chunk, library_file, library_folder CASCADE")
    for name in INDEXES:
        execute(f"DROP INDEX IF EXISTS {name}")
    owner, _ = get_user_model().objects.get_or_create(username="bench-search")
    folders = Folder.objects.bulk_create(
        Folder(owner=owner, source="local", external_id=f"/bench/{i}", name=f"folder-{i}-{size}", status="ready")
        for i, size in enumerate(sizes)
    )
    rng = np.random.default_rng(corpus.seed + 1)
    specs = list(file_specs(rng, sizes))
    started = time.perf_counter()
    files = File.objects.bulk_create(
        (
            File(
                folder=folders[s.folder],
                external_id=f"f{s.number}",
                path=f"dir{s.number % 40}/file{s.number}.txt",
                name=f"file{s.number}.txt",
                mime_type=s.mime_type,
                modified_time=s.modified,
                status="indexed",
                chunk_count=s.chunks,
            )
            for s in specs
        ),
        batch_size=5000,
    )
    timings["files"] = {"rows": len(files), "seconds": round(time.perf_counter() - started, 1)}
    connection.ensure_connection()
    register_vector(connection.connection)
    started, written = time.perf_counter(), 0
    for batch_start in range(0, len(specs), COPY_BATCH_FILES):
        batch = list(zip(specs[batch_start : batch_start + COPY_BATCH_FILES], files[batch_start:], strict=False))
        # One topic per file, drawn from its folder's topics.
        file_topics = [rng.choice(corpus.folder_topics[spec.folder]) for spec, _ in batch]
        topics = np.repeat(file_topics, [spec.chunks for spec, _ in batch])
        vectors, texts = corpus.vectors(rng, topics), corpus.texts(rng, topics)
        row = 0
        with connection.cursor() as cursor, cursor.cursor.copy(COPY_CHUNKS) as copy:
            copy.set_types(["int8", "int8", "int4", "text", "vector", "jsonb", "int4"])
            for spec, file in batch:
                for index in range(spec.chunks):
                    copy.write_row(
                        (
                            file.pk,
                            folders[spec.folder].pk,
                            index,
                            texts[row],
                            vectors[row],
                            Jsonb({"chunk": index}),
                            220,
                        )
                    )
                    row += 1
        written += row
        elapsed = time.perf_counter() - started
        print(f"\r  copied {written:,} chunks, {written / elapsed:,.0f} rows/s", end="", flush=True)
    timings["chunks"] = {"rows": written, "seconds": round(time.perf_counter() - started, 1)}
    print()
    execute("SET maintenance_work_mem = '6GB'")
    for name, ddl in INDEXES.items():
        started = time.perf_counter()
        execute(ddl)
        timings[name] = round(time.perf_counter() - started, 1)
        print(f"  {name}: built in {timings[name]} s")
    started = time.perf_counter()
    execute("VACUUM ANALYZE library_chunk")
    execute("VACUUM ANALYZE library_file")
    timings["vacuum_analyze"] = round(time.perf_counter() - started, 1)
    stats = {}
    for folder, size in zip(folders, sizes, strict=True):
        started = time.perf_counter()
        folder_lexeme_stats_refresh(folder_id=folder.pk)
        stats[size] = round(time.perf_counter() - started, 3)
    timings["lexeme_stats_seconds_by_size"] = stats
    execute(
        "INSERT INTO bench_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        [key, json.dumps(timings)],
    )
    return timings


TABLE_HNSW = "library_chunk_embedding_hnsw_all"
DESIGNS = {
    "buckets": "16 partial HNSW indexes (folder_id % 16), the planner's choice (iterative scans on pgvector >= 0.8)",
    "buckets-overfetch": "16 partial HNSW indexes, over-fetching ef_search, no iterative scans (the pgvector 0.6 path)",
    "table": "one table-wide HNSW index, iterative scans (hnsw.iterative_scan = relaxed_order)",
}


def use_design(design: str) -> dict:
    """Build the HNSW indexes `design` reads (timed, when missing) and drop the others."""
    from apps.search import planning

    buckets = {
        vector_index.index_name(bucket): vector_index.create_index_sql(bucket, concurrently=False)
        for bucket in range(vector_index.BUCKETS)
    }
    wanted = {TABLE_HNSW: f"CREATE INDEX {TABLE_HNSW} ON library_chunk USING hnsw (embedding vector_cosine_ops)"}
    if design != "table":
        wanted = buckets
    present = {row[0] for row in execute("SELECT indexname FROM pg_indexes WHERE tablename = 'library_chunk'")}
    execute("SET maintenance_work_mem = '6GB'")
    started = time.perf_counter()
    built = [name for name in wanted if name not in present]
    for name in built:
        execute(wanted[name])
    build_seconds = round(time.perf_counter() - started, 1)
    for name in ({TABLE_HNSW, *buckets} - set(wanted)) & present:
        execute(f"DROP INDEX {name}")
    execute("ANALYZE library_chunk")
    if design == "buckets-overfetch":
        planning.pgvector_has_iterative_scans = lambda: False  # type: ignore[assignment]
    (size,) = execute(
        "SELECT coalesce(sum(pg_relation_size(indexrelid)), 0) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'library_chunk'::regclass AND a.amname = 'hnsw'"
    )[0]
    (version,) = execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")[0]
    return {
        "design": design,
        "pgvector": version,
        "hnsw_indexes": len(wanted),
        "hnsw_bytes": int(size),
        "build_seconds": build_seconds if built else "already built",
    }


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
    """Keeps the last search statement and its parameters, for EXPLAIN ANALYZE."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def __call__(self, execute, sql, params, many, context):
        self.calls.append((sql, params))
        return execute(sql, params, many, context)


def explain(folder_id: int, question: str, vector: np.ndarray) -> str:
    from django.db import connection, transaction

    from apps.search.selectors import chunk_search

    recorder = StatementRecorder()
    with connection.execute_wrapper(recorder):
        chunk_search(folder_id=folder_id, query=question, k=10, query_vector=vector)
    settings_sql, settings_params = next(call for call in recorder.calls if "set_config" in call[0])
    search_sql, search_params = recorder.calls[-1]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(settings_sql, settings_params)
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + search_sql, search_params)
        return "\n".join(f"    {row[0]}" for row in cursor.fetchall())


def measure(folder_id: int, size: int, questions: list, vectors_by_folder: dict, explain_plan: bool) -> dict:
    from django.db import connection

    from apps.search import planning
    from apps.search.selectors import chunk_search

    def one(question: tuple[str, np.ndarray]) -> float:
        started = time.perf_counter()
        chunk_search(folder_id=folder_id, query=question[0], k=10, query_vector=question[1])
        return (time.perf_counter() - started) * 1000

    # Warm the folder's pages and the index paths these questions take, as a live server has them.
    for question in questions:
        one(question)
    single = [one(question) for question in questions]

    def client(batch: list) -> list[float]:
        try:
            return [one(question) for question in batch]
        finally:
            connection.close()

    started = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        concurrent = [t for result in pool.map(client, [questions[i::CLIENTS] for i in range(CLIENTS)]) for t in result]
    throughput = len(questions) / (time.perf_counter() - started)

    recalls_k10, recalls_depth = [], []
    for text, vector in questions[:50]:
        truth = set(exact_top(folder_id, vectors_by_folder, vector, 10))
        found = chunk_search(folder_id=folder_id, query=text, k=10, mode="vector", query_vector=vector)
        recalls_k10.append(len(truth & {hit.chunk_id for hit in found}) / len(truth))
        # The vector side as hybrid runs it: 50 candidates deep (the fusion depth), so the same ef_search.
        deep = chunk_search(folder_id=folder_id, query=text, k=50, mode="vector", query_vector=vector)
        recalls_depth.append(len(truth & {hit.chunk_id for hit in deep[:10]}) / len(truth))
    plan = planning.folder_vector_plan(folder_id=folder_id, folder_rows=size, k=10, depth=50)
    plan_name = plan.method.value if plan.method == "exact" else f"{plan.method.value} ef={plan.ef_search}"
    result = {
        "size": size,
        "plan": plan_name,
        "p50": percentile(single, 50),
        "p95": percentile(single, 95),
        "c_p50": percentile(concurrent, 50),
        "c_p95": percentile(concurrent, 95),
        "qps": throughput,
        "recall10": float(np.mean(recalls_k10)),
        "recall_depth": float(np.mean(recalls_depth)),
    }
    if explain_plan:
        result["explain"] = explain(folder_id, *questions[0])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200, help="per folder size")
    parser.add_argument("--reload", action="store_true")
    parser.add_argument("--no-explain", action="store_true")
    parser.add_argument("--design", choices=sorted(DESIGNS), default="buckets", help="HNSW index layout to measure")
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
    use_scratch_services(f"bench_search_speed_{args.chunks}", embedding_provider="hash")
    if args.exact_max_rows is not None:
        from apps.search import planning

        planning.EXACT_MAX_ROWS = args.exact_max_rows
    if args.keyword_cap is not None:
        from apps.search import selectors

        selectors.KEYWORD_CANDIDATE_CAP = args.keyword_cap
    largest = min(200_000, args.chunks // 5)
    sizes = folder_sizes(total=args.chunks, count=FOLDERS, smallest=SMALLEST, largest=largest)
    corpus = Corpus.build(seed=args.seed, sizes=sizes)
    key = f"loaded:{args.chunks}:{args.seed}"
    timings = None if args.reload else loaded_meta(key)
    if timings is None:
        print(f"loading {args.chunks:,} chunks into {FOLDERS} folders of {sizes[0]:,}..{sizes[-1]:,} chunks")
        timings = load(corpus, sizes, key)
    print("load timings:", json.dumps(timings))
    index = use_design(args.design)
    print(f"design {args.design}: {DESIGNS[args.design]}")
    print(
        f"  pgvector {index['pgvector']}, {index['hnsw_indexes']} HNSW index(es), "
        f"{index['hnsw_bytes'] / 2**20:.0f} MiB, build {index['build_seconds']} s"
    )
    print(f"load average before measuring: {os.getloadavg()[0]:.2f}")

    from apps.library.models import Folder

    folders = {int(f.name.split("-")[2]): (f.pk, int(f.name.split("-")[1])) for f in Folder.objects.all()}
    chosen = sorted({min(folders, key=lambda size: abs(size - target)) for target in TARGET_SIZES if target <= largest})
    rng = np.random.default_rng(args.seed + 2)
    results = []
    for size in chosen:
        folder_id, position = folders[size]
        vectors_by_folder = {folder_id: folder_vectors(folder_id)}
        questions = corpus.questions(rng, position, args.queries)
        result = measure(folder_id, size, questions, vectors_by_folder, explain_plan=not args.no_explain)
        results.append(result)
        print(
            f"folder of {size:>7,} chunks ({result['plan']}): single p50 {result['p50']:.1f} ms p95 {result['p95']:.1f}"
            f" ms | {CLIENTS} clients p50 {result['c_p50']:.1f} ms p95 {result['c_p95']:.1f} ms {result['qps']:.0f} q/s"
            f" | vector recall@10 {result['recall10']:.3f} (k=10), {result['recall_depth']:.3f} (depth 50)",
            flush=True,
        )
    print(
        f"\n{'chunks':>8} {'plan':>14} {'p50':>6} {'p95':>6} {'8c p50':>7} {'8c p95':>7} {'q/s':>5} "
        f"{'R@10':>6} {'R@10 d50':>8}"
    )
    for r in results:
        print(
            f"{r['size']:>8,} {r['plan']:>14} {r['p50']:>6.1f} {r['p95']:>6.1f} {r['c_p50']:>7.1f} {r['c_p95']:>7.1f}"
            f" {r['qps']:>5.0f} {r['recall10']:>6.3f} {r['recall_depth']:>8.3f}"
        )
    print(f"load average after measuring: {os.getloadavg()[0]:.2f}")
    for r in results:
        if "explain" in r:
            print(f"\nEXPLAIN ANALYZE, hybrid top-10, folder of {r['size']:,} chunks ({r['plan']}):\n{r['explain']}")


if __name__ == "__main__":
    main()

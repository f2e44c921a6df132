"""Loading search_speed.py's rows into the partitioned ``library_chunk``, and what each layout costs.

``load``: files and folders through the ORM, chunks by binary COPY with the tsvector trigger on and
the search indexes dropped, then the indexes built as the partition move (library/0015) defines
them (timed) and the per-folder lexeme statistics refreshed (timed). What was loaded is recorded in
``bench_meta``, so later runs with the same key reuse the rows. ``layout_costs``: the time to write
a layout's rows and build its indexes, and its heaps' and indexes' sizes.
"""

from __future__ import annotations

import json
import time

import numpy as np

from apps.library import chunk_partitions
from bench.search.search_speed_data import Corpus, file_specs

COPY_BATCH_FILES = 2000
# As the partition move builds them (in one statement each, on every partition: nobody else uses
# this database): dropped before the load, built after it.
INDEXES = {
    index.name: f"CREATE INDEX {index.name} ON library_chunk {index.definition}"
    for index in chunk_partitions.partitioned_layout().indexes
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


def save_meta(key: str, value: dict) -> None:
    execute(
        "INSERT INTO bench_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        [key, json.dumps(value)],
    )


def forget_meta(prefix: str) -> None:
    execute("DELETE FROM bench_meta WHERE key LIKE %s", [prefix + "%"])


def load(corpus: Corpus, sizes: list[int], key: str, *, partitions: int = chunk_partitions.PARTITIONS) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from pgvector.psycopg import register_vector
    from psycopg.types.json import Jsonb

    from apps.library.models import File, Folder
    from apps.search.services import folder_lexeme_stats_refresh

    timings: dict = {}
    execute("TRUNCATE library_chunk, library_file, library_folder CASCADE")
    if len(chunk_partitions.chunk_partition_sizes()) != partitions:
        # The product's move; on an empty table it only creates the new layout.
        chunk_partitions.chunk_table_move(layout=chunk_partitions.partitioned_layout(partitions=partitions))
    timings["partitions"] = partitions
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
    save_meta(key, timings)
    return timings


# A layout's heaps: the partitions of library_chunk, or one plain table.
_HEAPS = {
    "partitions": "SELECT inhrelid FROM pg_inherits WHERE inhparent = 'library_chunk'::regclass",
    "buckets": "SELECT 'bench_chunk_buckets'::regclass::oid",
}


def layout_costs(layout: str, timings: dict, indexes: dict[str, str]) -> dict:
    """Seconds to write the rows and build each kind of index (``indexes``: name -> CREATE INDEX, as
    loaded), and MiB of heap (with TOAST) and of each kind of index; the keys' btrees count as btree."""
    heaps = _HEAPS[layout]
    (heap,) = execute(f"SELECT coalesce(sum(pg_table_size(oid)), 0) FROM pg_class WHERE oid IN ({heaps})")[0]
    by_method = dict(
        execute(
            "SELECT a.amname, sum(pg_relation_size(x.indexrelid)) FROM pg_index x"
            " JOIN pg_class c ON c.oid = x.indexrelid JOIN pg_am a ON a.oid = c.relam"
            f" WHERE x.indrelid IN ({heaps}) GROUP BY a.amname"
        )
    )
    seconds = {"hnsw": 0.0, "gin": 0.0, "btree": 0.0}
    for name, ddl in indexes.items():
        method = next((m for m in ("hnsw", "gin") if f"USING {m}" in ddl), "btree")
        seconds[method] += float(timings.get(name, 0.0))
    mib = 2**20
    return {
        "rows_seconds": timings["chunks"]["seconds"],
        "rows_how": timings["chunks"].get("how", "COPY+trigger"),  # with the tsvector trigger
        "build_seconds": {method: round(value, 1) for method, value in seconds.items()},
        "vacuum_analyze": timings.get("vacuum_analyze"),
        "heap_mib": int(heap) / mib,
        "index_mib": {method: int(by_method.get(method, 0)) / mib for method in ("hnsw", "gin", "btree")},
    }

"""What a chunk's insert costs in partitions of different sizes, and which index grows with them.

bench/ingest/ingest_scale.py found one stage growing faster than the file count: the write (the
file's chunks COPied through the tsvector trigger into the folder's partition and its indexes),
with PostgreSQL's CPU a file 8.8 -> 16.1 ms from 10,000 to 100,000 files. This separates it. On
search_speed.py's scratch database (``bench_search_speed_<chunks>``; run that first), for the
partition nearest each ``--sizes`` (rows, the planner's estimate): ``--rows`` chunks of another
partition (their texts and embeddings) inserted into a folder of that partition as one statement,
as the product writes a file's chunks, with every index, without the HNSW graph, without the GIN
index, and without both. An index is left out by dropping it inside the transaction, which is
then rolled back, like every insert here: the database is left as it was. Per row, the fastest of
``--repeats``; the HNSW and GIN columns are the differences. The growth exponent fits the HNSW
insert's cost against the partition's rows (log-log, smallest to largest).

    .venv/bin/python bench/ingest/index_insert_cost.py [--chunks 1000000] [--rows 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.common.machine import cpu, load_average
from bench.search.common import use_scratch_services

SIZES = [10_000, 30_000, 100_000, 200_000, 300_000]
VARIANTS = {"all": (), "no hnsw": ("hnsw",), "no gin": ("gin",), "neither": ("hnsw", "gin")}
# The parent indexes (dropping one drops every partition's) by access method.
_PARENT_INDEXES = """
SELECT am.amname, i.indexrelid::regclass::text
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
WHERE i.indrelid = 'library_chunk'::regclass AND am.amname IN ('hnsw', 'gin')
"""
_INSERT = """
INSERT INTO library_chunk (id, chunk_index, text, embedding, location, token_count, file_id, folder_id)
SELECT nextval(pg_get_serial_sequence('library_chunk', 'id')), %(first_index)s + row_number() OVER (ORDER BY s.id),
       s.text, s.embedding, s.location, s.token_count, %(file_id)s, %(folder_id)s
FROM library_chunk s WHERE s.folder_id = %(source_folder)s AND s.id > %(after)s
ORDER BY s.id LIMIT %(rows)s
"""


def chosen_partitions(targets: list[int]) -> tuple[list[tuple[str, int]], str]:
    """(name, rows) of the partition nearest each target, and the largest other one (the source)."""
    from apps.library.chunk_partitions import chunk_partition_sizes

    sizes = [(p.name, p.rows) for p in chunk_partition_sizes() if p.rows > 0]
    chosen = {min(sizes, key=lambda part: abs(part[1] - target)) for target in targets}
    others = sorted(set(sizes) - chosen, key=lambda part: part[1])
    if not others:
        raise SystemExit("no partition left to take chunks from: load search_speed.py's database, or ask fewer --sizes")
    return sorted(chosen, key=lambda part: part[1]), others[-1][0]


def insert_target(cursor, partition: str) -> dict[str, int]:
    """A folder and file of ``partition``, and a chunk index past any it holds."""
    cursor.execute(f"SELECT folder_id, file_id, chunk_index FROM {partition} ORDER BY chunk_index DESC LIMIT 1")
    folder_id, file_id, last_index = cursor.fetchone()
    return {"folder_id": folder_id, "file_id": file_id, "first_index": last_index + 1}


def insert_seconds(cursor, *, target: dict[str, int], drop: list[str], source: tuple[int, int], rows: int) -> float:
    """One rolled-back insert of ``rows`` chunks into ``target``, the indexes ``drop`` dropped first."""
    from django.db import transaction

    with transaction.atomic():
        for index in drop:
            cursor.execute(f"DROP INDEX {index}")
        started = time.perf_counter()
        cursor.execute(_INSERT, {**target, "source_folder": source[0], "after": source[1], "rows": rows})
        spent = time.perf_counter() - started
        if cursor.rowcount != rows:
            raise SystemExit(f"the source folder gave {cursor.rowcount} rows, not {rows}: use fewer --rows")
        transaction.set_rollback(True)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1_000_000, help="which search_speed.py database")
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES, help="partition rows (the nearest each)")
    parser.add_argument("--rows", type=int, default=1000, help="chunks a statement")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    use_scratch_services(f"bench_search_speed_{args.chunks}", embedding_provider="hash")
    from django.db import connection

    partitions, source_partition = chosen_partitions(args.sizes)
    with connection.cursor() as cursor:
        # Another folder's chunks, so that each insert brings texts and vectors new to its partition.
        cursor.execute(
            f"SELECT folder_id, min(id) - 1 FROM {source_partition} GROUP BY folder_id ORDER BY count(*) DESC LIMIT 1"
        )
        source = cursor.fetchone()
        cursor.execute(_PARENT_INDEXES)
        indexes = dict(cursor.fetchall())
        targets = {name: insert_target(cursor, name) for name, _ in partitions}
    print(f"{cpu()}\n{load_average()}; {args.rows} chunks a statement, the fastest of {args.repeats}", flush=True)
    spent: dict[tuple[str, str], float] = {}
    for _ in range(args.repeats):
        for name, _rows in partitions:
            for variant, drop in VARIANTS.items():
                dropped = [indexes[method] for method in drop]
                with connection.cursor() as cursor:
                    seconds = insert_seconds(cursor, target=targets[name], drop=dropped, source=source, rows=args.rows)
                key = (name, variant)
                spent[key] = min(spent.get(key, math.inf), seconds)
    print(f"\nµs a chunk; hnsw = all - no hnsw, gin = all - no gin ({load_average()})")
    print(f"{'partition':>20} {'rows':>9} | " + " ".join(f"{v:>8}" for v in VARIANTS) + f" | {'hnsw':>6} {'gin':>6}")
    hnsw: list[tuple[int, float]] = []
    for name, rows in partitions:
        each = {variant: 1e6 * spent[(name, variant)] / args.rows for variant in VARIANTS}
        hnsw.append((rows, each["all"] - each["no hnsw"]))
        print(
            f"{name:>20} {rows:>9,} | "
            + " ".join(f"{each[v]:>8.0f}" for v in VARIANTS)
            + f" | {each['all'] - each['no hnsw']:>6.0f} {each['all'] - each['no gin']:>6.0f}"
        )
    (small_rows, small), (large_rows, large) = hnsw[0], hnsw[-1]
    if small > 0 and large > 0 and large_rows > small_rows:
        exponent = math.log(large / small) / math.log(large_rows / small_rows)
        print(f"HNSW insert cost ~ rows^{exponent:.2f} from {small_rows:,} to {large_rows:,} rows")
    print(cpu())


if __name__ == "__main__":
    main()

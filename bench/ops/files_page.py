"""The files page's API at 100,000 files: first-page latency of `GET /api/folders/{id}/files`.

One folder of 100,000 file rows (paths in nested directories, six types, mostly indexed, some
failed and skipped, sizes and modification times spread over three years) and a small second
folder, in a scratch database, vacuumed and analysed as autovacuum would leave them. Each query
is the page's first request (limit 50, with the paginator's COUNT) through the whole view, in
process; p50 and p95 over `--repeats` after one warm-up. Target: p95 <= 300 ms for every query.

    .venv/bin/python bench/ops/files_page.py [--files 100000] [--repeats 30] [--explain] [--redis-db 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.common.machine import cpu, load_average
from bench.common.scratch import scratch_services

QUERIES = [
    ("default (by path)", {}),
    ("newest first", {"ordering": "-modified"}),
    ("largest first", {"ordering": "-size"}),
    ("by chunks", {"ordering": "chunks"}),
    ("by name", {"ordering": "name"}),
    ("failed", {"status": "failed"}),
    ("failed, newest first", {"status": "failed", "ordering": "-modified"}),
    ("type pdf, largest first", {"type": "pdf", "ordering": "-size"}),
    ("name contains 'report'", {"name": "report"}),
    ("name 'report', type pdf, newest", {"name": "report", "type": "pdf", "ordering": "-modified"}),
    ("under a directory", {"path_prefix": "projects-16/"}),
]
TYPES = [
    ("pdf", "application/pdf"),
    ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("md", "text/markdown"),
    ("txt", "text/plain"),
    ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("png", "image/png"),
]
WORDS = ["report", "invoice", "notes", "minutes", "budget", "contract", "draft", "summary", "plan", "photo"]
STATUSES = ["indexed"] * 90 + ["skipped"] * 5 + ["failed"] * 3 + ["pending"] * 2


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--explain", action="store_true", help="print each query's plans (page and count)")
    parser.add_argument("--redis-db", type=int, default=15, help="scratch Redis db (flushed afterwards)")
    args = parser.parse_args()
    print(cpu())
    with scratch_services("bench_files_page", redis_db=args.redis_db):
        folder_id, user = load(args.files)
        measure(folder_id=folder_id, user=user, repeats=args.repeats)
        if args.explain:
            explain(folder_id=folder_id)


# The rows, generated in the database (a Python loop took minutes on a loaded machine): paths in
# nested directories, six types, 90% indexed, some skipped, failed and pending, sizes up to 50 MB,
# modification times over three years (every 500th unknown). random() follows setseed: the same
# rows every run.
_INSERT_SQL = """
INSERT INTO library_file (
    created_at, updated_at, folder_id, external_id, path, name, mime_type, size, checksum, modified_time,
    preview, digest, status, error, indexed_checksum, chunk_count, index_started_at
)
SELECT now(), now(), %(folder_id)s, dir || name, dir || name, name, mime, size, '', modified,
       '', '', status, CASE WHEN status = 'failed' THEN 'ValueError: the parser gave up' ELSE '' END, '',
       CASE WHEN status = 'indexed' THEN 1 + floor(random() * 400)::int ELSE 0 END, NULL
FROM (
    SELECT n,
           (%(tops)s::text[])[1 + n %% 4] || '-' || (n %% 50) || '/' || (%(words)s::text[])[1 + (n * 7) %% 10] || '/'
               AS dir,
           (%(words)s::text[])[1 + floor(random() * 10)::int] || '-' || n || '.' || (%(extensions)s::text[])[1 + n %% 6]
               AS name,
           (%(mimes)s::text[])[1 + n %% 6] AS mime,
           200 + floor(random() * 50000000)::bigint AS size,
           CASE WHEN n %% 500 = 0 THEN NULL ELSE now() - random() * interval '1095 days' END AS modified,
           (%(statuses)s::text[])[1 + floor(random() * 100)::int] AS status
    FROM generate_series(%(first)s, %(last)s) AS n
) AS generated
"""


def load(count: int) -> tuple[int, object]:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from apps.library.models import Folder

    user = get_user_model().objects.create_user(username="bench")
    folder = Folder.objects.create(owner=user, source="local", external_id="/bench/big", name="big")
    other = Folder.objects.create(owner=user, source="local", external_id="/bench/small", name="small")
    started = time.perf_counter()
    values = {
        "tops": ["projects", "archive", "finance", "home"],
        "words": WORDS,
        "extensions": [extension for extension, _ in TYPES],
        "mimes": [mime for _, mime in TYPES],
        "statuses": STATUSES,
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.7)")
        cursor.execute(_INSERT_SQL, {**values, "folder_id": folder.pk, "first": 0, "last": count - 1})
        cursor.execute(_INSERT_SQL, {**values, "folder_id": other.pk, "first": 0, "last": 1_999})
        cursor.execute("VACUUM ANALYZE library_file")
    print(f"  {count:,} files loaded in {time.perf_counter() - started:.1f} s (vacuumed, analysed)")
    return folder.pk, user


def measure(*, folder_id: int, user: object, repeats: int) -> None:
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user)  # type: ignore[arg-type]
    url = f"/api/folders/{folder_id}/files"
    print(f"  {'query (first page, limit 50)':<36} {'count':>8} {'p50 ms':>8} {'p95 ms':>8}")
    worst = 0.0
    for label, params in QUERIES:
        params = {**params, "limit": 50}
        response = client.get(url, params)
        assert response.status_code == 200, response.content[:300]
        timings = []
        for _ in range(repeats):
            started = time.perf_counter()
            response = client.get(url, params)
            timings.append((time.perf_counter() - started) * 1000)
        p50 = statistics.median(timings)
        p95 = statistics.quantiles(timings, n=20)[18]
        worst = max(worst, p95)
        print(f"  {label:<36} {response.json()['count']:>8,} {p50:8.1f} {p95:8.1f}")
    print(f"  worst p95 {worst:.1f} ms (target <= 300 ms): {'met' if worst <= 300 else 'MISSED'} ({load_average()})")


def explain(*, folder_id: int) -> None:
    from apps.library import selectors
    from apps.library.models import Folder

    folder = Folder.objects.get(pk=folder_id)
    for label, params in QUERIES:
        files = selectors.file_list(
            folder=folder,
            status=params.get("status"),
            path_prefix=params.get("path_prefix"),
            file_type=params.get("type"),
            name=params.get("name"),
            ordering=params.get("ordering", "path"),
        )
        print(f"\n== {label}: page\n{files[:50].explain(analyze=True)}")
        print(f"== {label}: count\n{files.order_by().values('pk').explain(analyze=True)}")


if __name__ == "__main__":
    main()

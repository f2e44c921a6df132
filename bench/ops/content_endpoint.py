"""`GET /api/files/{id}/content` on a 50 MB PDF through uvicorn (ASGI), as a browser's PDF viewer uses it.

Prints the median time to first byte, a full download's time and rate, a 64 KiB `Range` request's
time, and how much the server process's memory grew while serving (a file gathered whole before its
first byte would add its size). Scratch database and Redis db; the PDF is generated under
var/bench/content/.

    .venv/bin/python bench/ops/content_endpoint.py [--megabytes 50] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from bench.common.scratch import scratch_services
from tests.support.documents import pdf_bytes
from tests.support.servers import start_uvicorn

RANGE_BYTES = 64 * 1024
LINE = "Line {line} of page {page}: the quick brown fox jumps over the lazy dog, twice, for good measure."


def write_pdf(path: Path, megabytes: int) -> int:
    """A valid PDF of about `megabytes` MB: pages of plain text lines (~24 KB each)."""
    page = "\n".join(LINE.format(line=line, page="{page}") for line in range(240))
    pages = [page.replace("{page}", str(number)) for number in range(megabytes * 1024 * 1024 // 24_500)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pdf_bytes(pages))
    return path.stat().st_size


def first_byte_and_total(client: httpx.Client, url: str) -> tuple[float, float, int]:
    started = time.perf_counter()
    received, first = 0, 0.0
    with client.stream("GET", url) as response:
        response.raise_for_status()
        for piece in response.iter_raw():
            if not received:
                first = time.perf_counter() - started
            received += len(piece)
    return first, time.perf_counter() - started, received


def range_request(client: httpx.Client, url: str, offset: int) -> float:
    started = time.perf_counter()
    response = client.get(url, headers={"Range": f"bytes={offset}-{offset + RANGE_BYTES - 1}"})
    elapsed = time.perf_counter() - started
    assert response.status_code == 206 and len(response.content) == RANGE_BYTES, response.status_code
    return elapsed


class PeakMemory:
    """The largest resident size of a process, sampled every 10 ms in a thread."""

    def __init__(self, pid: int) -> None:
        self._process = psutil.Process(pid)
        self.baseline = self.peak = self._process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, self._process.memory_info().rss)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    pdf = ROOT / "var" / "bench" / "content" / "large.pdf"
    size = write_pdf(pdf, args.megabytes)
    print(f"generated {pdf.relative_to(ROOT)}: {size / 1e6:.1f} MB")

    with scratch_services("bench_content", LOG_LEVEL="WARNING"):
        from django.contrib.auth import get_user_model

        from apps.core.tokens import personal_token_create
        from apps.library.models import File, Folder

        user = get_user_model().objects.create_user(username="bench-content")
        folder = Folder.objects.create(owner=user, source="local", external_id=str(pdf.parent), name="bench")
        file = File.objects.create(
            folder=folder, external_id=pdf.name, path=pdf.name, name=pdf.name, mime_type="application/pdf", size=size
        )
        _, token = personal_token_create(user=user, name="content bench", scopes=["read"])
        log_path = ROOT / "var" / "bench-content-server.log"
        with start_uvicorn(env=dict(os.environ), log_path=log_path, log_level="warning") as server:
            url = f"{server.url}/api/files/{file.pk}/content"
            with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=120) as client:
                first_byte_and_total(client, url)  # warm: imports, connection, page cache
                with PeakMemory(server.process.pid) as memory:
                    runs = [first_byte_and_total(client, url) for _ in range(args.repeats)]
                ranges = [range_request(client, url, offset=size // 2 + i * RANGE_BYTES) for i in range(20)]
    assert all(received == size for _, _, received in runs)
    first = statistics.median(run[0] for run in runs) * 1000
    total = statistics.median(run[1] for run in runs)
    print(f"time to first byte:      median {first:7.1f} ms  (of {args.repeats})")
    print(f"full download:           median {total * 1000:7.1f} ms  ({size / 1e6 / total:.0f} MB/s)")
    print(f"Range {RANGE_BYTES // 1024} KiB mid-file:   median {statistics.median(ranges) * 1000:7.1f} ms  (of 20)")
    print(f"server memory growth:    {(memory.peak - memory.baseline) / 1e6:7.1f} MB while serving {size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()

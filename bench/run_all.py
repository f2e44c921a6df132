"""`make bench`: every benchmark in turn, each in its own process, figures printed as they come.

`python bench/run_all.py search_quality chat_overhead` runs only the named ones.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
# In this order; each runs by its name (the file's stem).
BENCHMARKS = [
    "ingest/ingest_pipeline.py",
    "ingest/ingest_local_model.py",
    "search/embedder_speed.py",
    "ingest/backfill.py",
    "ops/commit_durability.py",
    "search/search_quality.py",
    "search/rerank_quality.py",
    "search/search_latency.py",
    "search/search_keywords.py",
    "search/search_speed.py",
    "search/search_halfvec.py",
    "chat/chat_overhead.py",
    "chat/chat_latency.py",
    "chat/prompt_cache.py",
    "ops/sse_latency.py",
    "chat/mcp_overhead.py",
    "ops/content_endpoint.py",
    "ops/event_publish.py",
    "ingest/drive_sync.py",
    "ops/watcher_delay.py",
    "ops/fairness.py",
    "ops/files_page.py",
    "ops/sync_nochange.py",
    "ops/folders_page.py",
    "inbox/router_latency.py",
    "ops/load.py",
    "ingest/ocr_quality.py",
    "ingest/transcription_wer.py",
    "ingest/formats.py",
    "ingest/real_folder.py",
]
NAMES = {Path(path).stem: path for path in BENCHMARKS}
# Shorter settings than a script's defaults, so that `make bench` stays reasonable.
ARGUMENTS = {"load": ["--seconds", "30"], "fairness": ["--big", "5000"]}


def main(selected: list[str]) -> int:
    unknown = set(selected) - set(NAMES)
    if unknown:
        print(f"unknown benchmark(s): {', '.join(sorted(unknown))}; choose from {', '.join(NAMES)}")
        return 2
    failures = []
    for name in selected or NAMES:
        print(f"\n=== {name} ===", flush=True)
        started = time.monotonic()
        result = subprocess.run([sys.executable, str(BENCH_DIR / NAMES[name]), *ARGUMENTS.get(name, [])], check=False)
        print(f"=== {name}: exit {result.returncode} in {time.monotonic() - started:.0f} s ===", flush=True)
        if result.returncode:
            failures.append(name)
    if failures:
        print(f"\nfailed: {', '.join(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`make bench`: every benchmark in turn, each in its own process, figures printed as they come.

`python bench/run_all.py search_quality chat_overhead` runs only the named ones.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
BENCHMARKS = [
    "ingest_pipeline",
    "ingest_local_model",
    "embedder_speed",
    "backfill",
    "commit_durability",
    "search_quality",
    "rerank_quality",
    "search_latency",
    "search_keywords",
    "search_speed",
    "search_halfvec",
    "chat_overhead",
    "chat_latency",
    "prompt_cache",
    "sse_latency",
    "mcp_overhead",
    "content_endpoint",
    "event_publish",
    "drive_sync",
    "watcher_delay",
    "fairness",
    "files_page",
    "router_latency",
    "load",
    "ocr_quality",
    "transcription_wer",
    "formats",
    "real_folder",
]
# Shorter settings than a script's defaults, so that `make bench` stays reasonable.
ARGUMENTS = {"load": ["--seconds", "30"], "fairness": ["--big", "5000"]}


def main(selected: list[str]) -> int:
    unknown = set(selected) - set(BENCHMARKS)
    if unknown:
        print(f"unknown benchmark(s): {', '.join(sorted(unknown))}; choose from {', '.join(BENCHMARKS)}")
        return 2
    failures = []
    for name in selected or BENCHMARKS:
        print(f"\n=== {name} ===", flush=True)
        started = time.monotonic()
        result = subprocess.run([sys.executable, str(BENCH_DIR / f"{name}.py"), *ARGUMENTS.get(name, [])], check=False)
        print(f"=== {name}: exit {result.returncode} in {time.monotonic() - started:.0f} s ===", flush=True)
        if result.returncode:
            failures.append(name)
    if failures:
        print(f"\nfailed: {', '.join(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

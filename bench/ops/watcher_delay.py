"""A local folder's delay from a file written on disk to that file found by search, through the watcher.

Runs the Procfile's `worker` and `watcher` lines (prefork worker on every queue, `manage.py
watch_folders`) on a scratch database, connects an empty local folder, then writes N files one at a
time (each waits until search finds its own unique word) and N more at once (a burst: until the
last is found). The embedder is the packaged MiniLM unless --embedder says otherwise; a first file,
not counted, loads it. Target: every file searchable within 10 s.

    .venv/bin/python bench/ops/watcher_delay.py [--files 20] [--embedder local]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from bench.common import scratch

TARGET_SECONDS = 10.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=20, help="files written one at a time, then as many at once")
    parser.add_argument("--embedder", default="local", help="EMBEDDING_PROVIDER of the worker (default local)")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    with (
        tempfile.TemporaryDirectory(prefix="watcher-delay-") as tmp,
        scratch.scratch_services("bench_watcher", LOCAL_FOLDER_ROOTS=tmp, EMBEDDING_PROVIDER=args.embedder),
    ):
        run(Path(tmp), files=args.files)


def run(directory: Path, *, files: int) -> None:
    from django.contrib.auth.models import User
    from django.utils import timezone

    from apps.library.models import Folder

    owner = User.objects.create_user(username=f"bench-watcher-{uuid.uuid4().hex[:6]}")
    # Synced now with a day's interval: only the watcher makes it sync.
    folder = Folder.objects.create(
        owner=owner,
        source="local",
        external_id=str(directory),
        name="watched",
        status="ready",
        last_synced_at=timezone.now(),
        sync_interval_seconds=86_400,
    )
    with procfile_process("worker", ready="ready."), procfile_process("watcher", ready=f"watching folder {folder.pk}"):
        warm = write_and_wait(folder.pk, directory, ["warm-up"])
        print(f"first file (loads the embedder, not counted): {warm:.2f} s")
        one_by_one = [write_and_wait(folder.pk, directory, [f"single-{n}"]) for n in range(files)]
        burst = write_and_wait(folder.pk, directory, [f"burst-{n}" for n in range(files)])
    report(one_by_one, burst=burst, files=files)


def write_and_wait(folder_id: int, directory: Path, names: list[str], *, timeout: float = 60.0) -> float:
    """Write one text file per name, each with a word of its own; seconds until search finds them all."""
    from apps.search.selectors import chunk_search
    from apps.search.types import SearchMode

    words = {name: f"zq{uuid.uuid4().hex[:10]}" for name in names}
    started = time.monotonic()
    for name, word in words.items():
        (directory / f"{name}.md").write_text(f"# {name}\n\nA note written for the watcher bench: {word}.\n")
    waiting = set(words.values())
    while waiting:
        if time.monotonic() - started > timeout:
            raise SystemExit(f"{len(waiting)} of {len(words)} files not searchable after {timeout:.0f} s")
        waiting = {
            word for word in waiting if not chunk_search(folder_id=folder_id, query=word, k=1, mode=SearchMode.KEYWORD)
        }
        time.sleep(0.05)
    return time.monotonic() - started


def report(delays: list[float], *, burst: float, files: int) -> None:
    ordered = sorted(delays)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    print(f"\nwritten -> searchable, {len(delays)} files one at a time (each waits for the one before):")
    print(f"  p50 {statistics.median(ordered):.2f} s   p95 {p95:.2f} s   max {ordered[-1]:.2f} s")
    print(f"{files} files written at once -> the last searchable: {burst:.2f} s")
    worst = max(ordered[-1], burst)
    verdict = "met" if worst <= TARGET_SECONDS else "MISSED"
    print(f"target: every file within {TARGET_SECONDS:.0f} s: {verdict} (worst {worst:.2f} s)")
    from django.conf import settings

    one, five, _ = os.getloadavg()
    print(
        f"watcher: quiet {settings.WATCHER_QUIET_SECONDS} s, max wait {settings.WATCHER_MAX_WAIT_SECONDS} s;"
        f" load average {one:.1f} / {five:.1f} on {os.cpu_count()} cores"
    )


@contextmanager
def procfile_process(name: str, *, ready: str) -> Iterator[subprocess.Popen[bytes]]:
    """The Procfile's line ``name`` as `python -m ...`, ready once its log shows ``ready``."""
    from tests.support.servers import procfile_command, spawn, stop, wait_until_ready

    prefix, module = procfile_command(name, hostname=f"bench-watcher-{os.getpid()}@%h")
    log_path = ROOT / "var" / f"bench-watcher-{name}.log"
    process = spawn(module, env={**os.environ, "LOG_LEVEL": "INFO"}, log_path=log_path, prefix=prefix)
    try:
        wait_until_ready(lambda: ready in log_path.read_text(), process=process, log_path=log_path, what=name)
        print(f"{name}: {shlex.join([*prefix, *module])} (log: {log_path.relative_to(ROOT)})")
        yield process
    finally:
        stop(process)


if __name__ == "__main__":
    main()

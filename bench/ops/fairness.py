"""Fairness across folders: a small folder's indexing alone, and while a big folder indexes.

Three runs on one scratch database, each with the embedder loaded first (MiniLM unless
--embedder says otherwise):

1. alone: the small folder (another user's) on the Procfile's workers (`worker`: every
   indexing queue, sync, organize; `smallworker`: indexing_small, sync; `chatworker`: agent,
   default);
2. under load, this tree: the same, added once the big folder's groups are queued and running;
3. under load, as on main before: one worker on every queue, 2 slots (main's Procfile line),
   every group in the one indexing queue at one priority: first come, first served (the small
   folder is listed in this process, then queued: on main its listing queued too).

Per run: the small folder's wait (added -> its first file indexed) and its time to all indexed,
and round trips of a `ping` task through the agent and default queues (what a chat run waits
for a slot). Targets: under load the small folder starts within 10 s and finishes within 2x its
time alone; chat queues never wait behind indexing.

    .venv/bin/python bench/ops/fairness.py [--big 20000] [--small 20] [--cap 120] [--without-main]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from bench.common import scratch

# main's Procfile `worker` line before the chat worker split: every queue, 2 slots.
# (+ indexing_small, where listings go now: all on its 2 slots, as on main)
MAIN_WORKER = (
    "celery -A config worker --loglevel=INFO -Q indexing,indexing_small,backfill,sync,organize,agent,default"
    " --concurrency=2"
)
PINGS = 5


@dataclass
class Figures:
    wait: float | None = None  # added -> first file indexed
    total: float | None = None  # added -> every file indexed
    queued_ahead: int = 0  # indexing tasks waiting when the small folder was added
    agent_pings: list[float] | None = None
    default_pings: list[float] | None = None
    totals: list[float | None] | None = None  # each small folder's, when repeated (wait: the longest; total: median)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big", type=int, default=20_000, help="files in the big folder")
    parser.add_argument("--small", type=int, default=20, help="files in the small folder")
    parser.add_argument("--cap", type=float, default=120.0, help="seconds to wait for the small folder at most")
    parser.add_argument("--repeat", type=int, default=3, help="small folders alone and under load (medians)")
    # On Linux with autogroup scheduling, a session's processes share one CPU weight and `nice` only
    # ranks processes within their session (sched(7)); honcho gives every Procfile line a session.
    parser.add_argument(
        "--sessions", action="store_true", help="each worker in a session of its own, as honcho starts Procfile lines"
    )
    parser.add_argument("--without-main", action="store_true", help="skip the third run (main's layout)")
    parser.add_argument("--embedder", default="local", help="EMBEDDING_PROVIDER of the workers (default local)")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    with (
        tempfile.TemporaryDirectory(prefix="fairness-") as tmp,
        scratch.scratch_services("bench_fairness", LOCAL_FOLDER_ROOTS=tmp, EMBEDDING_PROVIDER=args.embedder),
    ):
        run(
            Path(tmp),
            big=args.big,
            small=args.small,
            cap=args.cap,
            repeat=args.repeat,
            main_run=not args.without_main,
            sessions=args.sessions,
        )


def run(directory: Path, *, big: int, small: int, cap: float, repeat: int, main_run: bool, sessions: bool) -> None:
    started = time.monotonic()
    # 3 groups: past the small runs' queue, so both of the bulk worker's slots load the model (a
    # small folder alone lands on whichever worker has waited longest, often the bulk one).
    for name, count in [("warm", 300), ("big-fair", big), ("big-fifo", big)]:
        write_notes(directory / name, count)
    alone_names = [f"small-alone-{n}" for n in range(repeat)]
    fair_names = [f"small-fair-{n}" for n in range(repeat)]
    write_notes(directory / "warm-small", 200)  # 2 groups: one per smallworker slot
    for name in [*alone_names, *fair_names, "small-fifo"]:
        write_notes(directory / name, small)
    from tests.support.servers import procfile_command

    print(f"wrote 2 x {big} + 300 + 200 + {1 + 2 * repeat} x {small} notes in {time.monotonic() - started:.0f} s")
    results = {}
    # The small runs' worker alone first, so that its slots are the ones that load the model then.
    with workers(procfile_command("smallworker"), sessions=sessions):
        index_and_wait(directory / "warm-small")
        with workers(procfile_command("worker"), procfile_command("chatworker"), first=1, sessions=sessions):
            index_and_wait(directory / "warm")
            alone = [measure(directory / name, cap=cap) for name in alone_names]
            results["alone"] = show("alone", repeated(alone))
            # The first under load starts the big folder; the others follow while it still indexes.
            loaded = [measure(directory / fair_names[0], cap=cap, big=directory / "big-fair")]
            loaded += [measure(directory / name, cap=cap) for name in fair_names[1:]]
            results["under load"] = show("under load", repeated(loaded))
    queues_reset()
    if not main_run:
        return report(results, big=big, small=small, cap=cap)
    with (
        workers(MAIN_WORKER, sessions=sessions),
        mock.patch("apps.core.queues.run_priority", lambda position: 0),
        mock.patch("apps.core.queues.run_queue", lambda groups: "indexing"),
    ):
        index_and_wait(directory / "warm", force=True)
        fifo = measure(directory / "small-fifo", cap=cap, big=directory / "big-fifo", listed_here=True)
        results["under load, main"] = show("under load, main", fifo)
    queues_reset()
    report(results, big=big, small=small, cap=cap)


def write_notes(folder: Path, count: int) -> None:
    """Notes of about 1.5 kB (one or two chunks each), each with words of its own."""
    folder.mkdir()
    body = "The quarterly review covers budgets, hiring and the roadmap for the next release. " * 16
    for n in range(count):
        (folder / f"note-{n:05}.md").write_text(f"# Note {n} of {folder.name}\n\n{uuid.uuid4().hex} {body}\n")


def folder_new(path: Path) -> int:
    from django.contrib.auth.models import User

    from apps.library.models import Folder

    owner = User.objects.create_user(username=f"bench-{path.name}-{uuid.uuid4().hex[:6]}")
    return Folder.objects.create(owner=owner, source="local", external_id=str(path), name=path.name).pk


def index_and_wait(path: Path, *, force: bool = False) -> None:
    from apps.library.models import File, Folder
    from workers.indexing import index_folder

    folder = Folder.objects.filter(external_id=str(path)).first()
    folder_id = folder.pk if folder else folder_new(path)
    if force:
        File.objects.filter(folder_id=folder_id).update(indexed_checksum="")
    index_folder.delay(folder_id)
    until(lambda: File.objects.filter(folder_id=folder_id).exists(), timeout=120)
    until(lambda: not File.objects.filter(folder_id=folder_id).exclude(status="indexed").exists(), timeout=900)


def measure(small: Path, *, cap: float, big: Path | None = None, listed_here: bool = False) -> Figures:
    from apps.core.queue_metrics import queue_metrics_list
    from apps.library.indexing import folder_index
    from apps.library.models import File
    from apps.library.services import folder_index_enqueue

    figures = Figures()
    if big is not None:
        listed = time.monotonic()
        big_id = folder_new(big)
        folder_index(folder_id=big_id)  # listed here; its groups go to the workers' queue
        print(f"{big.name}: listed and queued in {time.monotonic() - listed:.0f} s")
        # Load: both indexing slots on the big folder's groups (its first two are taken at once).
        until(lambda: File.objects.filter(folder_id=big_id, status="indexed").exists(), timeout=600)
    figures.queued_ahead = sum(q.depth for q in queue_metrics_list() if q.name.startswith("indexing"))
    from apps.library.models import Folder

    small_id = folder_new(small)
    started = time.monotonic()
    if listed_here:
        folder_index(folder_id=small_id)
    else:
        folder_index_enqueue(folder=Folder.objects.get(pk=small_id))
    indexed = File.objects.filter(folder_id=small_id, status="indexed")
    total = sum(1 for _ in small.iterdir())
    while time.monotonic() - started < cap:
        done = indexed.count()
        if done and figures.wait is None:
            figures.wait = time.monotonic() - started
        if done == total:
            figures.total = time.monotonic() - started
            break
        time.sleep(0.1)
    figures.agent_pings = pings("agent", cap=cap)
    figures.default_pings = pings("default", cap=cap)
    return figures


def repeated(runs: list[Figures]) -> Figures:
    """Several small folders' figures as one: the longest wait, the median time (None if any never
    finished), each one's time."""
    waits = [run.wait for run in runs]
    totals = [run.total for run in runs]
    return Figures(
        wait=None if None in waits else max(waits),  # type: ignore[type-var]
        total=None if None in totals else statistics.median(totals),  # type: ignore[type-var]
        queued_ahead=runs[0].queued_ahead,
        agent_pings=[ping for run in runs for ping in run.agent_pings or []],
        default_pings=[ping for run in runs for ping in run.default_pings or []],
        totals=totals,
    )


def pings(queue: str, *, cap: float) -> list[float]:
    """Round trips of the ping task through ``queue`` (a slot's wait, mostly); ``cap`` when none came back."""
    from celery.exceptions import TimeoutError as ResultTimeout

    from workers.maintenance import ping

    seconds = []
    for n in range(PINGS):
        started = time.monotonic()
        try:
            ping.apply_async(args=[str(n)], queue=queue).get(timeout=cap)
        except ResultTimeout:
            return [*seconds, cap]
        seconds.append(time.monotonic() - started)
    return seconds


def show(name: str, figures: Figures) -> Figures:
    print(f"{name}: {figures}")
    return figures


def until(condition: object, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise SystemExit(f"not done after {timeout:.0f} s")
        time.sleep(0.2)


def queues_reset() -> None:
    """Nothing left for the next run: waiting tasks purged, a killed worker's unacked ones dropped."""
    import redis

    from config.celery import app

    app.control.purge()
    redis.Redis.from_url(os.environ["REDIS_URL"]).delete("unacked", "unacked_index")


@contextmanager
def workers(*commands: str | tuple[list[str], list[str]], first: int = 0, sessions: bool = False) -> Iterator[None]:
    """Each worker (a Procfile line's (prefix, `python -m` args), or a `celery ... worker` command)
    with a node name of its own."""
    from tests.support import servers
    from tests.support.servers import spawn, stop, wait_until_ready

    servers.READY_TIMEOUT = 300  # a prefork worker on a busy machine takes more than a minute to start
    with ExitStack() as stack:
        for index, command in enumerate(commands, start=first):
            prefix, module = command if isinstance(command, tuple) else ([], ["celery", *shlex.split(command)[1:]])
            args = [arg for arg in module if not arg.startswith("--hostname")]
            args.append(f"--hostname=bench-fairness-{index}-{os.getpid()}@%h")
            log_path = ROOT / "var" / f"bench-fairness-worker-{index}.log"
            process = spawn(args, env=dict(os.environ), log_path=log_path, prefix=prefix, own_group=sessions)
            stack.callback(stop, process)
            ready = log_path.read_text
            wait_until_ready(lambda ready=ready: "ready." in ready(), process=process, log_path=log_path, what="worker")
            print(f"worker: {shlex.join([*prefix, *args])} (log: {log_path.relative_to(ROOT)})")
        yield


def report(results: dict[str, Figures], *, big: int, small: int, cap: float) -> None:
    def seconds(value: float | None) -> str:
        return f"{value:.1f} s" if value is not None else f"> {cap:.0f} s"

    def ping_text(values: list[float] | None) -> str:
        return f"{statistics.median(values):.2f} / {max(values):.2f} s" if values else "-"

    alone = results["alone"]

    def ratio(value: float | None) -> str:
        return f"{value / alone.total:.2f}x" if value and alone.total else "-"

    rows = [
        ("indexing tasks queued when added", lambda f: str(f.queued_ahead)),
        ("wait: added -> first file (longest)", lambda f: seconds(f.wait)),
        (f"added -> all {small} indexed (median)", lambda f: seconds(f.total)),
        ("  each small folder", lambda f: " / ".join(seconds(t).removesuffix(" s") for t in f.totals or [f.total])),
        ("all indexed, x alone (median)", lambda f: ratio(f.total)),
        ("slowest, x alone (median)", lambda f: ratio(None if None in (f.totals or []) else max(f.totals or [0]))),
        (f"agent ping p50 / max (up to {PINGS})", lambda f: ping_text(f.agent_pings)),
        (f"default ping p50 / max (up to {PINGS})", lambda f: ping_text(f.default_pings)),
    ]
    print(f"\nsmall folder: {small} notes (~1.5 kB); big folder: {big} notes, indexing meanwhile")
    print(f"{'':38}" + "".join(f"{name:>20}" for name in results))
    for label, cell in rows:
        print(f"{label:38}" + "".join(f"{cell(figures):>20}" for figures in results.values()))
    fair = results["under load"]
    started = fair.wait is not None and fair.wait <= 10
    finished = fair.total is not None and alone.total is not None and fair.total <= 2 * alone.total
    verdicts = ["met" if ok else "MISSED" for ok in (started, finished)]
    print(f"target: starts within 10 s: {verdicts[0]}; finishes within 2x alone: {verdicts[1]}")
    one, five, _ = os.getloadavg()
    print(f"load average {one:.1f} / {five:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()

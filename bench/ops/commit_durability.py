"""What ``synchronous_commit = on`` (the embedded default) costs against ``off``, side by side.

Same run, same scratch database, alternating the setting (each connection sets it at start):
1. ingestion: a generated folder indexed end to end in-process (``folder_index --inline``, hash
   embedder: the database's share of the time is at its largest), once with few large files and
   once with many one-chunk notes (a commit per file group, the commit-heaviest case);
2. bare commits: one-row INSERT transactions, 1 client and 8 concurrent clients (concurrent
   commits share a WAL flush: group commit).

    .venv/bin/python bench/ops/commit_durability.py [--notes 400] [--documents 40] [--commits 400]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from bench.common.scratch import scratch_services

os.environ["EMBEDDING_PROVIDER"] = "hash"
MODES = ["on", "off"]
ROUNDS = 2
CLIENTS = 8
WORDS = [
    "invoice",
    "payment",
    "tax",
    "return",
    "budget",
    "report",
    "meeting",
    "project",
    "client",
    "deadline",
    "contract",
    "lease",
    "rent",
    "salary",
    "account",
    "bank",
    "statement",
    "transfer",
    "receipt",
    "expense",
    "travel",
    "flight",
    "hotel",
    "insurance",
    "policy",
    "claim",
    "doctor",
]


def make_corpus(root: Path, *, files: int, sentences: int, seed: int) -> None:
    rng = random.Random(seed)
    for index in range(files):
        folder = root / f"area{index % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        text = " ".join(" ".join(rng.choices(WORDS, k=12)).capitalize() + "." for _ in range(sentences))
        (folder / f"note{index}.txt").write_text(text)


def set_commit_mode(mode: str) -> None:
    from django.db import connections

    connections.close_all()
    connections["default"].settings_dict["OPTIONS"]["options"] = f"-c synchronous_commit={mode}"


def check_mode(mode: str) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone() == (mode,)


def index_once(corpus: Path, mode: str) -> tuple[float, int]:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from apps.library.indexing import folder_index
    from apps.library.models import Chunk, Folder

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE library_chunk, library_file, library_indexingjob CASCADE")
    Folder.objects.all().delete()
    owner, _ = get_user_model().objects.get_or_create(username="bench")
    folder = Folder.objects.create(owner=owner, source="local", external_id=str(corpus), name=mode)
    set_commit_mode(mode)
    check_mode(mode)
    started = time.monotonic()
    folder_index(folder_id=folder.pk, inline=True)
    seconds = time.monotonic() - started
    return seconds, Chunk.objects.filter(folder=folder).count()


def commits(mode: str, count: int, clients: int) -> float:
    """Commits per second: `count` one-row transactions spread over `clients` connections."""
    import psycopg
    from django.db import connection

    from tests.support.servers import database_url_of_current_connection

    url = database_url_of_current_connection()
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_commit (id bigserial PRIMARY KEY, payload text)")

    def client(n: int) -> None:
        with psycopg.connect(url, options=f"-c synchronous_commit={mode}") as conn:
            for _ in range(n):
                with conn.transaction():
                    conn.execute("INSERT INTO bench_commit (payload) VALUES (%s)", ["x" * 200])

    started = time.monotonic()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, [count // clients] * clients))
    return (count // clients * clients) / (time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=400, help="one-chunk notes")
    parser.add_argument("--documents", type=int, default=40, help="documents of about 20 chunks")
    parser.add_argument("--commits", type=int, default=400)
    args = parser.parse_args()
    with scratch_services("bench_commit"):
        work = Path(tempfile.mkdtemp(prefix="bench-commit-", dir=ROOT / "var"))
        try:
            corpora = {
                f"{args.notes} one-chunk notes": (work / "notes", args.notes, 8),
                f"{args.documents} documents of ~20 chunks": (work / "docs", args.documents, 600),
            }
            for seed, (path, files, sentences) in enumerate(corpora.values()):
                make_corpus(path, files=files, sentences=sentences, seed=seed)
            print(f"\ningestion, folder_index --inline, median of {ROUNDS} alternating rounds:")
            for label, (path, _, _) in corpora.items():
                seconds: dict[str, list[float]] = {mode: [] for mode in MODES}
                chunks = 0
                for _ in range(ROUNDS):
                    for mode in MODES:
                        took, chunks = index_once(path, mode)
                        seconds[mode].append(took)
                on, off = (statistics.median(seconds[mode]) for mode in MODES)
                print(
                    f"  {label:<32} ({chunks} chunks)  on {on:6.2f} s ({chunks / on:6.0f} chunks/s)"
                    f"   off {off:6.2f} s ({chunks / off:6.0f} chunks/s)   on/off {on / off:4.2f}"
                )
            print("\nbare one-row commits per second:")
            for clients in (1, CLIENTS):
                rates = {mode: commits(mode, args.commits, clients) for mode in MODES}
                print(
                    f"  {clients} client(s): on {rates['on']:8.0f}/s   off {rates['off']:8.0f}/s"
                    f"   on/off {rates['on'] / rates['off']:4.2f}"
                )
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

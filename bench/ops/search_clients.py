"""Searching clients through the real web server at 1M chunks: p50/p95 per request, database pool on and off.

Runs on the scratch database ``bench_search_speed_<chunks>`` that bench/search/search_speed.py loaded
(100 folders ``folder-<position>-<size>`` owned by its user ``bench-search``; run it first). Adds only a
user ``bench-search-clients``, shared each measured folder as a viewer (``member_add``, the product's
sharing) and given an API token (read, search); its earlier tokens are deleted.

Servers, each on the scratch database with the search throttle lifted, two at a time, same questions:
- ``uvicorn``: the Procfile's web line as honcho runs it (one process), its pool (``DB_POOL_MAX_SIZE``)
  on as the line sets it and off (0);
- ``gunicorn``: the image's CMD, gunicorn with deploy/gunicorn.conf.py, ``WEB_CONCURRENCY=2``, pool on
  as that file sets it and off.

For the folder nearest each ``--sizes``: hybrid top-10 ``POST /api/folders/{id}/search`` questions (the
folder's topic words, bench/search/search_speed_data.py), each server warmed first (one client, then
all at once, so the pool's connections are open as on a running server); a single client
(pool on and off alternating question by question), then ``--clients`` concurrent clients (asyncio in
this process, one HTTP connection each, so they share no GIL with the server), on then off (the order
swapped each size). Per request: the client's time and the server's ``took_ms`` (question embedding and
the search's statements, `apps/search/apis.py`).

Where the time goes (single client, p50): the request as the client sees it; ``took_ms``; the rest of
the request (HTTP, auth, access check, DRF, JSON: client time - took_ms); measured in this process
with the same question and embedder: the embedding, the search's statements (``chunk_search`` with the
vector given) on a kept connection and as the first search of a new one (a new backend reads the
catalog of the partitions and their indexes), EXPLAIN ANALYZE's planning and execution of its
statement; a new Django connection + ``SELECT 1`` against a kept one; a bare HTTP round trip
(``/healthz``) and a small authenticated one (``GET /api/folders/{id}``). Under the concurrent clients:
the CPU a request of the web server's processes, of PostgreSQL's and of the clients, against the cores'
time a request (when the sum nears it, the cores are the bound). CPU and load average are
printed beside the figures: other work on the cores inflates every latency. Like search_speed.py, it
migrates the scratch database first.

    .venv/bin/python bench/ops/search_clients.py [--queries 100] [--servers uvicorn gunicorn]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.common.machine import cpu, load_average, process_tree_cpu
from bench.search.common import percentile, use_scratch_services
from bench.search.search_speed import DESIGNS, FOLDERS, SMALLEST, explain, timed
from bench.search.search_speed_data import Corpus, folder_sizes
from tests.support.servers import RunningServer, free_port, image_command, procfile_command, start_web

SIZES = [10_000, 20_000, 50_000, 200_000]
CLIENTS = 8
# Questions per folder and server before measuring (imports, the model, the folder's pages), one client
# then all at once: a running server's pool has its connections open (they close after 10 idle minutes).
WARMUP = 2 * CLIENTS
NEW_CONNECTIONS = 10  # searches each on a new connection, per folder size
READER = "bench-search-clients"
LOG_DIR = Path(tempfile.gettempdir()) / "bench-search-clients"
DESIGN = DESIGNS["partitions"]  # library_chunk as migrated: the product's statement


@dataclass
class Timings:
    """Per request: the client's milliseconds and the server's took_ms."""

    total: list[float] = field(default_factory=list)
    took: list[float] = field(default_factory=list)
    seconds: float = 0.0  # wall clock of the concurrent run
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds of the concurrent run, by party

    def add(self, total: float, took: float) -> None:
        self.total.append(total)
        self.took.append(took)


def p(values: list[float], q: int) -> float:
    return percentile(values, q) if values else float("nan")


# --- the scratch database: folders, the bench's reader, questions --------------------------------------


def bench_reader(folder_ids: list[int]) -> str:
    """The reader's API token (read and search scopes), after sharing it each folder as a viewer."""
    from django.contrib.auth import get_user_model

    from apps.core.models import PersonalToken
    from apps.core.tokens import personal_token_create
    from apps.library.members import member_add
    from apps.library.models import Folder, FolderMembership, FolderRole

    reader, _ = get_user_model().objects.get_or_create(username=READER)
    shared = set(FolderMembership.objects.filter(user=reader).values_list("folder_id", flat=True))
    for folder in Folder.objects.filter(pk__in=set(folder_ids) - shared).select_related("owner"):
        member_add(folder=folder, actor=folder.owner, name=READER, role=FolderRole.VIEWER)
    PersonalToken.objects.filter(user=reader).delete()
    _, secret = personal_token_create(user=reader, name="search clients bench", scopes=["read", "search"])
    return secret


def chosen_folders(chunks: int, targets: list[int]) -> list[tuple[int, int, int]]:
    """(size, folder id, position) of the folder nearest each target size."""
    from apps.library.models import Folder

    loaded = list(Folder.objects.filter(name__startswith="folder-"))
    folders = {int(f.name.split("-")[2]): (f.pk, int(f.name.split("-")[1])) for f in loaded}
    if len(loaded) != FOLDERS:
        raise SystemExit(f"load the corpus first: .venv/bin/python bench/search/search_speed.py --chunks {chunks}")
    sizes = sorted({min(folders, key=lambda size: abs(size - target)) for target in targets})
    return [(size, *folders[size]) for size in sizes]


# --- servers ------------------------------------------------------------------------------------------


def server_env(pool: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DB_POOL_MAX_SIZE"}  # the launch line's own, when on
    # The servers' metrics files apart from a running stack's (var/prometheus).
    env.update(THROTTLE_SEARCH="1000000/min", PROMETHEUS_MULTIPROC_DIR=str(LOG_DIR / "metrics"))
    return env if pool else {**env, "DB_POOL_MAX_SIZE": "0"}


@contextlib.contextmanager
def web_server(kind: str, *, pool: bool) -> Iterator[RunningServer]:
    env, port = server_env(pool), free_port()
    log_path = LOG_DIR / f"{kind}-pool-{'on' if pool else 'off'}.log"
    if kind == "uvicorn":
        prefix, args = procfile_command("web", env={**env, "WEB_PORT": str(port)})
        server = start_web(args, prefix=prefix, env=env, log_path=log_path, port=port)
    else:
        env.update(GUNICORN_BIND=f"127.0.0.1:{port}", WEB_CONCURRENCY="2")
        server = start_web(image_command(), env=env, log_path=log_path, port=port)
    with server as running:
        yield running


def pool_size(kind: str) -> str:
    if kind == "uvicorn":
        prefix, _ = procfile_command("web", env={k: v for k, v in os.environ.items() if k != "DB_POOL_MAX_SIZE"})
        return next(word.split("=")[1] for word in prefix if word.startswith("DB_POOL_MAX_SIZE="))
    conf = (Path(__file__).resolve().parents[2] / "deploy" / "gunicorn.conf.py").read_text()
    (size,) = re.findall(r'setdefault\("DB_POOL_MAX_SIZE", "(\d+)"\)', conf)
    return f"2 x {size}"


# --- clients ------------------------------------------------------------------------------------------


def search_body(question: str) -> dict[str, object]:
    return {"query": question, "k": 10, "mode": "hybrid"}


def searched(response: httpx.Response) -> float:
    if response.status_code != 200:
        raise SystemExit(f"search answered {response.status_code}: {response.text[:300]}")
    return float(response.json()["took_ms"])


def single_client(urls: list[str], token: str, folder_id: int, questions: list[str]) -> list[Timings]:
    """Each question to every server in turn, which one first alternating."""
    headers = {"Authorization": f"Bearer {token}"}
    results = [Timings() for _ in urls]
    with contextlib.ExitStack() as stack:
        clients = [stack.enter_context(httpx.Client(base_url=url, headers=headers, timeout=60)) for url in urls]
        for i, question in enumerate(questions):
            order = range(len(urls)) if i % 2 == 0 else reversed(range(len(urls)))
            for n in order:
                started = time.perf_counter()
                response = clients[n].post(f"/api/folders/{folder_id}/search", json=search_body(question))
                results[n].add((time.perf_counter() - started) * 1000, searched(response))
    return results


def cpu_seconds(server: RunningServer) -> dict[str, float]:
    """CPU seconds so far of the web server (its processes), of PostgreSQL (the postmaster and every
    backend, those that exited included) and of this process (the clients)."""
    from django.db import connection

    connection.ensure_connection()
    postmaster = psutil.Process(connection.connection.info.backend_pid).ppid()
    clients = psutil.Process().cpu_times()
    return {
        "server": process_tree_cpu(server.process.pid),
        "postgres": process_tree_cpu(postmaster),
        "clients": clients.user + clients.system,
    }


def concurrent_run(server: RunningServer, token: str, folder_id: int, questions: list[str], clients: int) -> Timings:
    """The concurrent clients' Timings, with the CPU each party spent meanwhile."""
    before = cpu_seconds(server)
    result = asyncio.run(concurrent_clients(server.url, token, folder_id, questions, clients))
    after = cpu_seconds(server)
    result.cpu = {party: after[party] - before[party] for party in before}
    return result


async def concurrent_clients(url: str, token: str, folder_id: int, questions: list[str], clients: int) -> Timings:
    result = Timings()

    async def client(batch: list[str]) -> None:
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
            for question in batch:
                started = time.perf_counter()
                response = await http.post(f"/api/folders/{folder_id}/search", json=search_body(question))
                result.add((time.perf_counter() - started) * 1000, searched(response))

    started = time.perf_counter()
    await asyncio.gather(*(client(questions[i::clients]) for i in range(clients)))
    result.seconds = time.perf_counter() - started
    return result


def round_trips(url: str, token: str, folder_id: int, count: int = 50) -> tuple[float, float]:
    """p50 ms of a bare HTTP round trip (/healthz: no view, no database) and of a small authenticated
    request (GET /api/folders/{id}: the token, the access check, DRF, a small JSON answer)."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=10) as http:
        times: dict[str, list[float]] = {"/healthz": [], f"/api/folders/{folder_id}": []}
        for _ in range(count):
            for path, spent in times.items():
                started = time.perf_counter()
                http.get(path).raise_for_status()
                spent.append((time.perf_counter() - started) * 1000)
    bare, small = (statistics.median(spent) for spent in times.values())
    return bare, small


# --- in this process: the parts of a search -----------------------------------------------------------


def search_parts(folder_id: int, questions: list[str]) -> dict[str, float]:
    """p50 of the question's embedding and of the search's statements (vector given), on a kept connection
    and on a new one (its first search: connecting, and the new backend reading the catalog for the
    partitions and their indexes), and EXPLAIN ANALYZE's planning and execution for the first question."""
    from django.conf import settings
    from django.db import connection

    from apps.embeddings.providers import get_embedder

    embedder = get_embedder(settings.EMBEDDING_PROVIDER)
    embed, statements, vectors = [], [], []
    for question in questions:
        started = time.perf_counter()
        vectors.append(np.asarray(embedder.embed_query(question), dtype=np.float32))
        embed.append((time.perf_counter() - started) * 1000)
    for question, vector in zip(questions, vectors, strict=True):
        timed(DESIGN, folder_id, (question, vector))  # warm: the folder's pages and index paths
    for question, vector in zip(questions, vectors, strict=True):
        statements.append(timed(DESIGN, folder_id, (question, vector)))
    first = []
    for question, vector in list(zip(questions, vectors, strict=True))[:NEW_CONNECTIONS]:
        connection.close()
        first.append(timed(DESIGN, folder_id, (question, vector)))
    plan = explain(DESIGN, folder_id, (questions[0], vectors[0]))
    summary = {name: float(ms) for name, ms in re.findall(r"(Planning|Execution) Time: ([\d.]+) ms", plan)}
    return {
        "embed": statistics.median(embed),
        "statements": statistics.median(statements),
        "first": statistics.median(first),
        "planning": summary["Planning"],
        "execution": summary["Execution"],
    }


def connection_costs(count: int = 30) -> tuple[float, float]:
    """p50 ms of a new Django connection + SELECT 1 (then closed), and of SELECT 1 on a kept one."""
    from django.db import connection, connections

    new, kept = [], []
    for _ in range(count):
        fresh = connections.create_connection("default")
        started = time.perf_counter()
        with fresh.cursor() as cursor:
            cursor.execute("SELECT 1")
        new.append((time.perf_counter() - started) * 1000)
        fresh.close()
    with connection.cursor() as cursor:
        for _ in range(count):
            started = time.perf_counter()
            cursor.execute("SELECT 1")
            kept.append((time.perf_counter() - started) * 1000)
    return statistics.median(new), statistics.median(kept)


# --- the run ------------------------------------------------------------------------------------------


def measure_kind(kind: str, token: str, folders: list, questions: dict, args: argparse.Namespace) -> dict:
    """Per folder size: single-client and concurrent Timings on the pool-on and pool-off servers."""
    results: dict[int, dict[str, Timings]] = {}
    with web_server(kind, pool=True) as on, web_server(kind, pool=False) as off:
        servers, urls = {"on": on, "off": off}, {"on": on.url, "off": off.url}
        trips = {name: round_trips(url, token, folders[0][1]) for name, url in urls.items()}
        for size, folder_id, _ in folders:
            single_client(list(urls.values()), token, folder_id, questions[size]["warm"])
            for server in servers.values():
                concurrent_run(server, token, folder_id, questions[size]["warm"], args.clients)
        for index, (size, folder_id, _) in enumerate(folders):
            one_on, one_off = single_client([on.url, off.url], token, folder_id, questions[size]["single"])
            row = {"1 on": one_on, "1 off": one_off}
            for name in ("on", "off") if index % 2 == 0 else ("off", "on"):
                many = questions[size]["many"]
                row[f"n {name}"] = concurrent_run(servers[name], token, folder_id, many, args.clients)
            results[size] = row
            print(f"  {kind}, folder of {size:,} chunks done; {load_average()}", flush=True)
    return {"rows": results, "trips": trips}


def print_kind(kind: str, measured: dict, clients: int) -> None:
    print(f"\n{kind}, pool {pool_size(kind)} on, 0 off; ms; took: the server's search (embedding + statements)")
    print(
        f"{'chunks':>8} {'pool':>4} | {'1 client p50':>12} {'p95':>6} {'took p50':>8} | "
        f"{clients} clients p50 {'p95':>6} {'took p50':>8} {'took p95':>8} {'q/s':>5}"
    )
    for size, row in measured["rows"].items():
        for name in ("on", "off"):
            one, many = row[f"1 {name}"], row[f"n {name}"]
            qps = len(many.total) / many.seconds
            print(
                f"{size:>8,} {name:>4} | {p(one.total, 50):>12.1f} {p(one.total, 95):>6.1f} {p(one.took, 50):>8.1f} | "
                f"{p(many.total, 50):>17.1f} {p(many.total, 95):>6.1f} {p(many.took, 50):>8.1f} "
                f"{p(many.took, 95):>8.1f} {qps:>5.0f}"
            )


def print_cpu(kind: str, measured: dict, clients: int) -> None:
    print(
        f"\nCPU a request, {kind}, {clients} clients (ms): the web server's processes, PostgreSQL's, the "
        f"clients' (this process); their sum against the {os.cpu_count()} cores' time a request (wall x cores)"
    )
    print(f"{'chunks':>8} {'pool':>4} | {'server':>6} {'postgres':>8} {'clients':>7} {'sum':>6} | {'cores':>6}")
    for size, row in measured["rows"].items():
        for name in ("on", "off"):
            many = row[f"n {name}"]
            each = {party: 1000 * seconds / len(many.total) for party, seconds in many.cpu.items()}
            cores = 1000 * many.seconds * (os.cpu_count() or 1) / len(many.total)
            print(
                f"{size:>8,} {name:>4} | {each['server']:>6.1f} {each['postgres']:>8.1f} {each['clients']:>7.1f} "
                f"{sum(each.values()):>6.1f} | {cores:>6.1f}"
            )


def print_where(kind: str, measured: dict, parts: dict[int, dict[str, float]], conn: tuple[float, float]) -> None:
    trips = measured["trips"]
    print(
        f"\nwhere the time goes, {kind}, single client, p50 ms: request = took (embedding + statements, in the "
        f"server) + rest (HTTP, auth, access check, DRF, JSON; pool off: + a new connection)"
    )
    print(
        f"{'chunks':>8} | {'request on':>10} {'took':>6} {'rest':>6} | {'request off':>11} {'rest':>6} | "
        f"{'embed':>6} {'statements':>10} {'new conn':>8} {'plan':>6} {'exec':>6}  (in this process)"
    )
    for size, row in measured["rows"].items():
        on, off, part = row["1 on"], row["1 off"], parts[size]
        print(
            f"{size:>8,} | {p(on.total, 50):>10.1f} {p(on.took, 50):>6.1f} {p(on.total, 50) - p(on.took, 50):>6.1f} | "
            f"{p(off.total, 50):>11.1f} {p(off.total, 50) - p(off.took, 50):>6.1f} | {part['embed']:>6.1f} "
            f"{part['statements']:>10.1f} {part['first']:>8.1f} {part['planning']:>6.1f} {part['execution']:>6.1f}"
        )
    print(
        f"new Django connection + SELECT 1: {conn[0]:.2f} ms, SELECT 1 on a kept one: {conn[1]:.2f} ms; "
        f"pool on / off: bare HTTP round trip (/healthz) {trips['on'][0]:.1f} / {trips['off'][0]:.1f} ms, a small "
        f"authenticated request (GET /api/folders/{{id}}) {trips['on'][1]:.1f} / {trips['off'][1]:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1_000_000, help="which search_speed.py database")
    parser.add_argument("--seed", type=int, default=5, help="search_speed.py's --seed of that database")
    parser.add_argument("--queries", type=int, default=100, help="per folder size, for 1 client and again for N")
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES, help="folder sizes (the nearest each)")
    parser.add_argument("--clients", type=int, default=CLIENTS)
    parser.add_argument("--servers", nargs="+", choices=["uvicorn", "gunicorn"], default=["uvicorn", "gunicorn"])
    parser.add_argument("--embedder", choices=["local", "hash"], default="local", help="the servers' and this one's")
    args = parser.parse_args()
    os.environ.pop("DB_POOL_MAX_SIZE", None)  # this process never pools; each server is told
    shutil.rmtree(LOG_DIR / "metrics", ignore_errors=True)
    (LOG_DIR / "metrics").mkdir(parents=True)
    use_scratch_services(f"bench_search_speed_{args.chunks}", embedding_provider=args.embedder)
    folders = chosen_folders(args.chunks, args.sizes)
    token = bench_reader([folder_id for _, folder_id, _ in folders])
    largest = min(200_000, args.chunks // 5)
    sizes = folder_sizes(total=args.chunks, count=FOLDERS, smallest=SMALLEST, largest=largest)
    corpus = Corpus.build(seed=args.seed, sizes=sizes)
    rng = np.random.default_rng(args.seed + 3)
    questions = {}
    for size, _, position in folders:
        texts = [text for text, _ in corpus.questions(rng, position, WARMUP + 2 * args.queries)]
        questions[size] = {
            "warm": texts[:WARMUP],
            "single": texts[WARMUP : WARMUP + args.queries],
            "many": texts[WARMUP + args.queries :],
        }
    print(
        f"{cpu()}\nembedder {args.embedder}; {args.queries} questions a size for 1 client and again for {args.clients}"
    )
    print(f"before measuring: {load_average()}", flush=True)
    parts = {size: search_parts(folder_id, questions[size]["single"]) for size, folder_id, _ in folders}
    conn = connection_costs()
    measured = {kind: measure_kind(kind, token, folders, questions, args) for kind in args.servers}
    print(f"after measuring: {load_average()}")
    for kind, result in measured.items():
        print_kind(kind, result, args.clients)
        print_cpu(kind, result, args.clients)
        print_where(kind, result, parts, conn)
    print(f"({cpu()}; server logs in {LOG_DIR})")


if __name__ == "__main__":
    main()

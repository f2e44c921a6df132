"""The deployment path: a focused suite against a PostgreSQL and a Valkey run as separate servers.

The servers are started as an operator runs them (own TCP port, password authentication); the
suite runs in a pytest of its own whose only way to them is ``DATABASE_URL`` / ``REDIS_URL``, with
var/services.env switched off (``SERVICES_ENV_FILE=""``): migrations, indexing, search, a task
round trip through a real worker, and SSE.
"""

from __future__ import annotations

import os
import subprocess
import sys
from urllib.parse import urlsplit

import psycopg
import pytest
import redis

from tests.support.faults import scratch_directory
from tests.support.operator_services import operator_services
from tests.support.servers import BASE_DIR

pytestmark = [pytest.mark.slow, pytest.mark.worker]

FOCUSED_SUITE = [
    "tests/core/test_migrations.py",
    "tests/library/test_indexing.py",
    "tests/search/test_chunk_search.py",
    "tests/search/test_search_api.py",
    "tests/core/test_celery_worker.py::test_task_round_trips_through_a_real_worker_process",
    "tests/chat/test_sse.py",
]
SUITE_TIMEOUT = 1200


def test_focused_suite_passes_against_separately_run_postgres_and_valkey_given_by_url():
    with scratch_directory("ext-") as directory, operator_services(directory) as services:
        env = {
            **os.environ,
            "DATABASE_URL": services.database_url,
            "REDIS_URL": services.redis_url,
            "SERVICES_ENV_FILE": "",
            "TEST_DB_SUFFIX": "",
            "TEST_REDIS_DB": "1",
        }
        env.pop("DJANGO_SETTINGS_MODULE", None)  # pytest.ini's test settings, as `make test` runs
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", *FOCUSED_SUITE],
            cwd=BASE_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=SUITE_TIMEOUT,
        )
        tail = "\n".join((run.stdout + run.stderr).splitlines()[-40:])
        assert run.returncode == 0, tail
        assert " passed" in tail, tail

        # It ran on these servers: the test database is there (kept by --reuse-db) and the broker
        # carried the worker's task.
        with psycopg.connect(services.database_url) as connection:
            databases = {row[0] for row in connection.execute("SELECT datname FROM pg_database")}
            assert "test_folderchat" in databases
            extension = connection.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
            assert (extension.fetchone() or ("",))[0] >= "0.8"
        with redis.Redis.from_url(services.redis_url) as client:
            assert "valkey_version" in client.info("server")
            assert int(client.info("stats")["total_commands_processed"]) > 100
        address = urlsplit(services.redis_url)
        with pytest.raises(redis.AuthenticationError):  # the password is really required
            redis.Redis(host=address.hostname or "", port=address.port or 0, password="wrong").ping()

"""A commit the embedded PostgreSQL acknowledged survives a crash of the server.

The server runs with the embedded default's ``synchronous_commit`` (apps/core/embedded_services.py).
With it off, a commit is acknowledged (and visible to other sessions) before its WAL is flushed:
killing every server process right after a file shows as indexed loses that file's row.
"""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest

from apps.core.embedded_services import POSTGRES_SETTINGS
from apps.library.models import Folder
from tests.support.faults import private_postgres
from tests.support.files import write
from tests.support.servers import BASE_DIR, database_url_of_current_connection, start_celery_worker, test_database_env
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

FILE_STATUS = "SELECT status FROM library_file WHERE folder_id = %s AND path = %s"


def test_a_file_reported_indexed_is_still_indexed_after_postgres_is_killed_and_restarted(user, tmp_path):
    root = tmp_path / "folder"
    write(root, "lease.txt", "The lease runs for twelve months and the deposit is one month of rent.")
    folder = Folder.objects.create(owner=user, source="local", external_id=str(root), name="lease")
    with private_postgres() as postgres:
        postgres.configure({"synchronous_commit": POSTGRES_SETTINGS["synchronous_commit"]})
        # The test database as it stands (schema, this user and folder), on a server of our own.
        database_url = postgres.copy_database(source_url=database_url_of_current_connection(), name="folderchat")
        env = test_database_env(EMBEDDING_PROVIDER="hash", DATABASE_URL=database_url)
        # Without the WAL writer, a commit that does not wait for its flush stays in memory until
        # the crash: the outcome does not hang on how fast the writer is.
        postgres.pause_wal_writer()
        with (
            psycopg.connect(database_url, autocommit=True) as watcher,
            start_celery_worker(
                env=env, queues=["indexing", "indexing_small"], log_path=tmp_path / "worker.log", name="durable"
            ),
        ):
            subprocess.run(
                [sys.executable, "manage.py", "folder_index", str(folder.pk)],
                cwd=BASE_DIR,
                env=env,
                check=True,
                capture_output=True,
                timeout=60,
            )

            def indexed() -> bool:
                row = watcher.execute(FILE_STATUS, [folder.pk, "lease.txt"]).fetchone()
                return row is not None and row[0] == "indexed"

            # Polled tightly: the crash comes within milliseconds of the commit becoming visible.
            wait_for(indexed, what="the file reported indexed", interval=0.005)
            postgres.crash()

        postgres.start()
        with psycopg.connect(database_url) as connection:
            status = connection.execute(FILE_STATUS, [folder.pk, "lease.txt"]).fetchone()
            chunks = connection.execute(
                "SELECT count(*) FROM library_chunk WHERE folder_id = %s AND embedding IS NOT NULL", [folder.pk]
            ).fetchone()
    assert status == ("indexed",)
    assert chunks is not None and chunks[0] >= 1

"""Every migration reverses: unapply to zero and apply again on a database that holds rows."""

import os
import subprocess
import sys
import uuid

import psycopg
import pytest
from django.db import connection

from apps.library import vector_index
from tests.support.servers import BASE_DIR, database_url_of_current_connection


def _admin_conninfo() -> dict:
    params = connection.settings_dict
    return {
        "host": params["HOST"],
        "port": params["PORT"] or None,
        "user": params["USER"],
        "password": params["PASSWORD"] or None,
        "dbname": "postgres",
        "autocommit": True,
    }


def _manage(database_url: str, *args: str) -> str:
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.slow
@pytest.mark.django_db
def test_migrations_reverse_to_zero_and_reapply_with_rows():
    name = f"migcheck_{uuid.uuid4().hex[:8]}"
    url = database_url_of_current_connection(database=name)
    with psycopg.connect(**{k: v for k, v in _admin_conninfo().items() if v is not None}) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        _manage(url, "migrate", "--noinput")
        with psycopg.connect(url) as db:
            user_id = db.execute(
                "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff,"
                " is_active, date_joined) VALUES ('x', false, 'u', '', '', '', false, true, now()) RETURNING id"
            ).fetchone()[0]
            folder_id = db.execute(
                "INSERT INTO library_folder (owner_id, source, external_id, name, status, files_total, files_indexed,"
                " sync_cursor, sync_interval_seconds, last_error, created_at, updated_at)"
                " VALUES (%s, 'local', '/x', 'x', 'ready', 1, 1, '', 3600, '', now(), now()) RETURNING id",
                [user_id],
            ).fetchone()[0]
            file_id = db.execute(
                "INSERT INTO library_file (folder_id, external_id, path, name, mime_type, size, checksum, preview,"
                " digest, status, error, indexed_checksum, chunk_count, created_at, updated_at)"
                " VALUES (%s, 'a', 'a.txt', 'a.txt', 'text/plain', 1, 'c', 'quarterly report', '', 'indexed', '',"
                " 'c', 1, now(), now()) RETURNING id",
                [folder_id],
            ).fetchone()[0]
            db.execute(
                "INSERT INTO library_chunk (file_id, folder_id, chunk_index, text, embedding, location, token_count)"
                " VALUES (%s, %s, 0, 'Revenue grew in Q4-2024', %s::vector, '{}', 5)",
                [file_id, folder_id, "[" + ",".join(["0.1"] * 384) + "]"],
            )
            # A disconnected Drive credential: NULL secrets must survive the way back to NOT NULL.
            db.execute(
                "INSERT INTO connectors_drivecredential (owner_id, access_token, refresh_token, scopes, created_at,"
                " updated_at) VALUES (%s, NULL, NULL, '[]', now(), now())",
                [user_id],
            )
            vector = db.execute("SELECT search_vector::text FROM library_chunk").fetchone()[0]
            assert "revenu" in vector  # the trigger filled the tsvector
        for app in ["organize", "chat", "connectors", "search", "library"]:
            _manage(url, "migrate", app, "zero", "--noinput")
        _manage(url, "migrate", "--noinput")
        with psycopg.connect(url) as db:
            indexes = {
                row[0] for row in db.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'library_chunk'")
            }
        # Partitioned by folder again (library/0015): the search indexes, one per partition.
        assert {vector_index.INDEX, "library_chunk_search_vector_gin", "library_chunk_id"} <= indexes
        assert "library_chunk_folder_idx" not in indexes
    finally:
        with psycopg.connect(**{k: v for k, v in _admin_conninfo().items() if v is not None}) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

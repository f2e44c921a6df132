"""Retiring rest_framework.authtoken: a key a client already holds becomes a personal token with
every scope, and the old table goes, so deleting that user still works."""

import hashlib
import uuid

import psycopg
import pytest

from tests.core.test_migrations import _admin_conninfo, _manage
from tests.support.servers import database_url_of_current_connection

# DRF authtoken's table as its migrations made it.
AUTHTOKEN_TABLE = """
CREATE TABLE authtoken_token (
    key varchar(40) PRIMARY KEY,
    created timestamptz NOT NULL,
    user_id integer NOT NULL UNIQUE REFERENCES auth_user (id) DEFERRABLE INITIALLY DEFERRED
)
"""


@pytest.mark.slow
@pytest.mark.django_db
def test_an_old_api_key_keeps_working_and_its_table_goes():
    name = f"migtoken_{uuid.uuid4().hex[:8]}"
    url = database_url_of_current_connection(database=name)
    with psycopg.connect(**{k: v for k, v in _admin_conninfo().items() if v is not None}) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        _manage(url, "migrate", "auth", "--noinput")
        _manage(url, "migrate", "core", "0002_audit_append_only", "--noinput")
        key = "0123456789abcdef0123456789abcdef01234567"
        with psycopg.connect(url) as db:
            db.execute(AUTHTOKEN_TABLE)
            user_id = db.execute(
                "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff,"
                " is_active, date_joined) VALUES ('x', false, 'u', '', '', '', false, true, now()) RETURNING id"
            ).fetchone()[0]
            db.execute("INSERT INTO authtoken_token (key, created, user_id) VALUES (%s, now(), %s)", [key, user_id])

        _manage(url, "migrate", "--noinput")

        with psycopg.connect(url) as db:
            row = db.execute(
                "SELECT user_id, name, scopes, prefix FROM core_personaltoken WHERE digest = %s",
                [hashlib.sha256(key.encode()).hexdigest()],
            ).fetchone()
            assert row == (user_id, "password login", ["read", "search", "chat", "manage"], key[:8])
            assert db.execute("SELECT to_regclass('authtoken_token')").fetchone() == (None,)
            db.execute("DELETE FROM core_personaltoken WHERE user_id = %s", [user_id])
            db.execute("DELETE FROM auth_user WHERE id = %s", [user_id])
    finally:
        with psycopg.connect(**{k: v for k, v in _admin_conninfo().items() if v is not None}) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

"""The embedded services `make services` runs: maintained versions, durable commits, clear upgrades."""

from __future__ import annotations

import os

import pytest

from apps.core import embedded_services


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3])


def test_running_embedded_services_are_maintained_versions_with_durable_commits():
    values = embedded_services._read_env()
    if not values or os.environ.get("DATABASE_URL"):
        pytest.skip("this session runs on servers given by DATABASE_URL, not the embedded ones")
    versions = embedded_services.versions(values)
    assert (16, 14) <= _version(versions["postgresql"]) < (17,)
    assert _version(versions["pgvector"]) >= (0, 8, 0)
    assert versions["synchronous_commit"] == "on"
    assert _version(versions["valkey"]) >= (9, 0)


def test_a_data_directory_of_another_major_version_is_left_alone_with_what_to_run(tmp_path, monkeypatch):
    (tmp_path / "PG_VERSION").write_text("17\n")
    monkeypatch.setattr(embedded_services, "PGDATA", tmp_path)
    with pytest.raises(SystemExit) as refused:
        embedded_services.start_postgres()
    assert "PostgreSQL 17 data" in str(refused.value) and "mv var/pgdata var/pgdata-17" in str(refused.value)
    assert (tmp_path / "PG_VERSION").read_text() == "17\n"

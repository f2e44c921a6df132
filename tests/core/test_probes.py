"""/healthz (the process answers) and /readyz (database, Redis, migrations) against the real
services; each failure is a real one: a closed loopback port, an unapplied migration."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

from apps.core import probes
from tests.support.servers import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _migrations_not_yet_checked(monkeypatch):
    monkeypatch.setattr(probes, "_migrations_applied", False)


def _closed_redis_url() -> str:
    return f"redis://127.0.0.1:{free_port()}/0"


def test_ready_against_the_real_services(client):
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["ready"] is True and body["failed"] == [] and body["detail"] == "Ready."
    assert set(body["checks"]) == {"database", "redis", "migrations"}
    assert all(check["ok"] for check in body["checks"].values())
    assert response["Cache-Control"] == "no-store"


def test_healthz_touches_no_dependency(client, settings, monkeypatch):
    settings.REDIS_URL = settings.CELERY_BROKER_URL = _closed_redis_url()
    monkeypatch.setitem(connection.settings_dict, "HOST", "127.0.0.1")
    monkeypatch.setitem(connection.settings_dict, "PORT", str(free_port()))
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert client.get("/readyz").status_code == 503  # the same outage, seen by readiness


def test_redis_unreachable_is_a_503_naming_redis(client, settings):
    settings.REDIS_URL = settings.CELERY_BROKER_URL = _closed_redis_url()
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["ready"] is False and body["failed"] == ["redis"]
    assert body["checks"]["database"]["ok"] and body["checks"]["migrations"]["ok"]
    assert body["checks"]["redis"]["message"] == "Celery broker (Redis) unreachable (ConnectionError)"
    assert body["detail"] == "Not ready: Celery broker (Redis) unreachable (ConnectionError)."
    # The address stays in the logs: an anonymous caller learns no host or port.
    assert "127.0.0.1" not in response.content.decode()


def test_an_events_redis_apart_from_the_broker_is_checked_too(client, settings):
    settings.REDIS_URL = _closed_redis_url()
    body = client.get("/readyz").json()
    assert body["failed"] == ["events_redis"]
    assert body["checks"]["redis"]["ok"]


def test_database_unreachable_is_a_503_naming_the_database(client, monkeypatch):
    # New connections go to a closed port; the test's own open connection is left alone.
    monkeypatch.setitem(connection.settings_dict, "HOST", "127.0.0.1")
    monkeypatch.setitem(connection.settings_dict, "PORT", str(free_port()))
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["database"]
    assert body["checks"]["database"]["message"] == "database unreachable (OperationalError)"
    assert "migrations" not in body["checks"]  # unknowable without the database
    assert body["checks"]["redis"]["ok"]


def test_an_unapplied_migration_is_a_503_naming_it(client):
    # Forgetting a leaf migration's record (rolled back with the test's transaction) makes it unapplied.
    MigrationRecorder(connection).migration_qs.filter(app="sessions", name="0001_initial").delete()
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["migrations"]
    assert body["checks"]["migrations"]["message"] == "1 unapplied: sessions.0001_initial"


def test_migrations_once_applied_are_not_read_again(client, django_assert_num_queries):
    assert client.get("/readyz").status_code == 200
    MigrationRecorder(connection).migration_qs.filter(app="sessions", name="0001_initial").delete()
    with django_assert_num_queries(0):
        response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"]["migrations"]["message"] == "ok (checked earlier in this process)"


def test_probes_answer_the_kubelet_anonymous_by_pod_ip_over_plain_http(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    for path in ("/healthz", "/readyz"):
        response = client.get(path, HTTP_HOST="10.244.1.17:8000")
        assert response.status_code == 200, (path, response.status_code)
        assert not response.cookies  # no session, no CSRF cookie
    # The same request anywhere else is refused by host validation, which the probes skip.
    assert client.get("/login/", HTTP_HOST="10.244.1.17:8000").status_code == 400


def test_probes_only_answer_get_and_head(client):
    assert client.head("/readyz").status_code == 200
    response = client.post("/healthz")
    assert response.status_code == 405 and response["Allow"] == "GET, HEAD"

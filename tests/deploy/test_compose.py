"""The compose file parses and is internally consistent (no Docker engine runs here)."""

from pathlib import Path

import yaml

from apps.core.embedded_services import POSTGRES_MAJOR
from apps.core.queues import ALL_QUEUES
from tests.support.servers import procfile_command

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def _compose() -> dict:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())


def test_compose_declares_every_role_with_health_checks():
    services = _compose()["services"]
    assert {"postgres", "redis", "web", "beat", "flower", "migrate"} <= set(services)
    for name in ["postgres", "redis", "web", "worker-indexing", "worker-sync", "worker-agent"]:
        assert "healthcheck" in services[name], name


def test_workers_together_consume_every_queue():
    consumed: set[str] = set()
    for name, service in _compose()["services"].items():
        command = service.get("command", [])
        if name.startswith("worker-"):
            consumed |= set(command[command.index("-Q") + 1].split(","))
    assert consumed == set(ALL_QUEUES)


def test_procfile_workers_consume_every_queue_and_chat_and_small_runs_have_slots_of_their_own():
    lines = dict(line.split(": ", 1) for line in (ROOT / "Procfile").read_text().splitlines() if ": " in line)
    consumed = {}
    for name, line in lines.items():
        command = line.split()
        if "worker" in command:
            consumed[name] = set(command[command.index("-Q") + 1].split(","))
    assert set().union(*consumed.values()) == set(ALL_QUEUES)
    # Chat runs and the small default tasks get slots of their own, never taken by indexing; so do
    # listings and small folders' runs, never taken by a big folder's groups.
    assert [queues for queues in consumed.values() if "agent" in queues] == [{"agent", "default"}]
    assert [queues for queues in consumed.values() if "indexing" not in queues and "indexing_small" in queues]


def test_procfile_bulk_indexing_runs_below_the_small_runs_and_chat_cpu_priority():
    # A small folder's one group shares 2 cores with a big folder's two: at one priority it ran
    # 2.4x its time alone (bench/ops/fairness.py); the bulk worker yields the CPU instead.
    niceness = {}
    for name in ["worker", "smallworker", "chatworker"]:
        prefix, args = procfile_command(name)
        assert args[:2] == ["celery", "-A"], args
        niceness[name] = int(prefix[2]) if prefix[:2] == ["nice", "-n"] else 0
    assert niceness["worker"] >= 10
    assert niceness["smallworker"] == niceness["chatworker"] == 0


def test_only_the_web_pools_its_database_connections():
    # The Procfile's web line sets DB_POOL_MAX_SIZE, and compose's web runs the image's CMD, whose
    # deploy/gunicorn.conf.py does (tests/deploy/test_connection_pool.py); Celery's prefork workers must not pool.
    lines = dict(line.split(": ", 1) for line in (ROOT / "Procfile").read_text().splitlines() if ": " in line)
    assert [name for name, line in lines.items() if "DB_POOL_MAX_SIZE" in line] == ["web"]
    services = _compose()["services"]
    assert "DB_POOL_MAX_SIZE" not in yaml.safe_dump(services)
    assert "command" not in services["web"]


def test_named_volumes_are_declared_and_app_services_wait_for_healthy_dependencies():
    compose = _compose()
    declared = set(compose["volumes"])
    used = set()
    for service in compose["services"].values():
        for volume in service.get("volumes", []):
            name = volume.split(":", 1)[0]
            assert name in declared or name.startswith(("/", ".")), volume
            used.add(name)
    assert used == declared  # and every declared volume is mounted somewhere
    assert "pgdata" in {v.split(":", 1)[0] for v in compose["services"]["postgres"]["volumes"]}
    assert compose["services"]["web"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert compose["services"]["beat"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_image_runs_the_asgi_app_as_an_unprivileged_user():
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "USER app" in dockerfile
    assert "config.asgi:application" in dockerfile
    assert "torch==2.13.0" in dockerfile


def test_service_images_are_pinned_to_the_embedded_major_versions():
    services = _compose()["services"]
    # pgvector 0.8 (iterative index scans) on the PostgreSQL major the embedded data directory uses.
    postgres = services["postgres"]["image"]
    assert postgres.startswith("pgvector/pgvector:0.8.") and postgres.endswith(f"-pg{POSTGRES_MAJOR}")
    assert services["redis"]["image"].startswith("valkey/valkey:9")

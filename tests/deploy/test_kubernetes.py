"""deploy/k8s renders with kustomize (kubectl's), every core object passes Kubernetes' own schemas
strictly, and the KEDA objects (custom resources no schema here covers) are checked against the
Deployments and the code's queues: each queue is consumed by one Deployment and scaled on its
Redis lists."""

from __future__ import annotations

import base64
import functools
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import kubernetes_validate
import pytest
import yaml

from apps.core.queues import ALL_QUEUES, PRIORITY_STEPS, run_queue

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
ENTRY_POINTS = ["", "overlays/dev", "overlays/prod"]
# The oldest Kubernetes still widely run, and the newest the schemas know.
SCHEMA_VERSIONS = ["1.30.0", kubernetes_validate.latest_version()]
SECRET_NAME = "folder-chat-secrets"
# kombu's Redis transport: "<queue>" for priority 0, "<queue>\x06\x16<step>" for the others.
PRIORITY_SEPARATOR = "\x06\x16"
# Indexing runs are sent with priorities (apps/library/indexing.py: run_queue, run_priority).
PRIORITY_QUEUES = {run_queue(1), run_queue(10_000)}


@functools.cache
def _render(entry: str) -> tuple[dict[str, Any], ...]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("kubectl is missing: install kubectl >= 1.27 (its kustomize v5 renders deploy/k8s)")
    result = subprocess.run(
        [kubectl, "kustomize", str(K8S / entry)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    return tuple(document for document in yaml.safe_load_all(result.stdout) if document)


def _objects(entry: str, kind: str) -> dict[str, dict[str, Any]]:
    return {obj["metadata"]["name"]: obj for obj in _render(entry) if obj["kind"] == kind}


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = deployment["spec"]["template"]["spec"]["containers"][0]
    return container


def _queues_consumed(deployment: dict[str, Any]) -> set[str]:
    command = _container(deployment).get("command", [])
    if "worker" not in command:
        return set()
    return set(command[command.index("-Q") + 1].split(","))


def _list_names(queue: str) -> set[str]:
    steps = PRIORITY_STEPS if queue in PRIORITY_QUEUES else (0,)
    return {f"{queue}{PRIORITY_SEPARATOR}{step}" if step else queue for step in steps}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_core_object_passes_the_kubernetes_schemas_strictly(entry):
    core = [obj for obj in _render(entry) if not obj["apiVersion"].startswith("keda.sh/")]
    assert {"Deployment", "Service", "ConfigMap", "Job", "HorizontalPodAutoscaler", "PodDisruptionBudget"} <= {
        obj["kind"] for obj in core
    }
    for obj in core:
        for version in SCHEMA_VERSIONS:
            kubernetes_validate.validate(obj, version, strict=True)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_queue_is_consumed_by_one_deployment_and_scaled_on_all_its_lists(entry):
    deployments = _objects(entry, "Deployment")
    consumers = {name: _queues_consumed(obj) for name, obj in deployments.items() if _queues_consumed(obj)}
    consumed = [queue for queues in consumers.values() for queue in queues]
    assert sorted(consumed) == sorted(ALL_QUEUES)  # every queue, each by exactly one Deployment
    scaled = _objects(entry, "ScaledObject")
    for name, queues in consumers.items():
        (scaler,) = [obj for obj in scaled.values() if obj["spec"]["scaleTargetRef"]["name"] == name]
        lists = {trigger["metadata"]["listName"] for trigger in scaler["spec"]["triggers"]}
        assert lists == set().union(*(_list_names(queue) for queue in queues)), name


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_scaled_objects_add_up_their_queues_for_an_existing_deployment(entry):
    deployments = _objects(entry, "Deployment")
    auths = _objects(entry, "TriggerAuthentication")
    hpa_targets = {hpa["spec"]["scaleTargetRef"]["name"] for hpa in _objects(entry, "HorizontalPodAutoscaler").values()}
    for name, scaler in _objects(entry, "ScaledObject").items():
        spec = scaler["spec"]
        target = spec["scaleTargetRef"]["name"]
        assert target in deployments and target not in hpa_targets, name  # one autoscaler per Deployment
        assert "replicas" not in deployments[target]["spec"]  # or every apply would reset KEDA's count
        assert 1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]
        triggers = spec["triggers"]
        assert {trigger["type"] for trigger in triggers} == {"redis"}
        assert {trigger["authenticationRef"]["name"] for trigger in triggers} <= set(auths)
        modifiers = spec["advanced"]["scalingModifiers"]
        assert sorted(re.split(r"\s*\+\s*", modifiers["formula"])) == sorted(t["name"] for t in triggers)
        assert int(modifiers["target"]) > 0
    for auth in auths.values():
        refs = auth["spec"]["secretTargetRef"]
        assert {ref["name"] for ref in refs} == {SECRET_NAME}
        assert {ref["parameter"]: ref["key"] for ref in refs} == {
            "address": "REDIS_ADDRESS",
            "password": "REDIS_PASSWORD",
        }


@pytest.mark.django_db
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_web_probes_point_at_healthz_and_readyz_which_answer(entry, client):
    web = _container(_objects(entry, "Deployment")["web"])
    ports = {port["name"]: port["containerPort"] for port in web["ports"]}
    probes = {kind: web[kind]["httpGet"] for kind in ("startupProbe", "livenessProbe", "readinessProbe")}
    assert probes["livenessProbe"]["path"] == probes["startupProbe"]["path"] == "/healthz"
    assert probes["readinessProbe"]["path"] == "/readyz"
    for probe in probes.values():
        assert probe["port"] in ports
        # What the kubelet sends: the pod's IP as the host, no cookie, no credentials.
        assert client.get(probe["path"], HTTP_HOST="10.244.0.9:8000").status_code == 200
    # The readiness checks are bounded at 2 s each; the kubelet must wait for them.
    assert web["readinessProbe"]["timeoutSeconds"] >= 4


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_beat_is_exactly_one_replica_and_never_two_during_a_rollout(entry):
    beat = _objects(entry, "Deployment")["beat"]
    assert beat["spec"]["replicas"] == 1 and beat["spec"]["strategy"] == {"type": "Recreate"}
    assert "beat" in _container(beat)["command"]
    assert not [
        hpa
        for hpa in _objects(entry, "HorizontalPodAutoscaler").values()
        if hpa["spec"]["scaleTargetRef"]["name"] == "beat"
    ]


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_app_container_has_resources_the_config_and_the_secret(entry):
    config_maps = _objects(entry, "ConfigMap")
    workloads = [*_objects(entry, "Deployment").values(), *_objects(entry, "Job").values()]
    for obj in workloads:
        container = _container(obj)
        resources = container["resources"]
        assert {"cpu", "memory"} <= set(resources["requests"]) and {"cpu", "memory"} <= set(resources["limits"])
        if obj["metadata"]["labels"].get("app.kubernetes.io/name") != "folder-chat":
            continue  # the dev overlay's PostgreSQL and Valkey
        (config,) = container["envFrom"]
        assert config["configMapRef"]["name"] in config_maps
        secret_keys = {
            env["name"]: env["valueFrom"]["secretKeyRef"]
            for env in container["env"]
            if "secretKeyRef" in env.get("valueFrom", {})
        }
        for key in ("DJANGO_SECRET_KEY", "FIELD_ENCRYPTION_KEYS", "DATABASE_URL", "REDIS_URL"):
            assert secret_keys[key] == {"name": SECRET_NAME, "key": key}, (obj["metadata"]["name"], key)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_web_and_every_worker_have_a_disruption_budget_and_web_an_hpa_on_cpu(entry):
    deployments = _objects(entry, "Deployment")
    budgets = [pdb["spec"]["selector"]["matchLabels"] for pdb in _objects(entry, "PodDisruptionBudget").values()]
    for name, obj in deployments.items():
        if name == "web" or _queues_consumed(obj):
            labels = obj["spec"]["template"]["metadata"]["labels"]
            assert any(selector.items() <= labels.items() for selector in budgets), name
    (hpa,) = _objects(entry, "HorizontalPodAutoscaler").values()
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_only_the_web_pools_its_database_connections(entry):
    # The web runs the image's CMD, gunicorn with deploy/gunicorn.conf.py, which turns the pool on
    # (tests/deploy/test_connection_pool.py); the ConfigMap every container reads never does, nor
    # any container's own env: Celery's prefork workers must not pool.
    for config in _objects(entry, "ConfigMap").values():
        assert "DB_POOL_MAX_SIZE" not in config.get("data", {}), config["metadata"]["name"]
    deployments = _objects(entry, "Deployment")
    for name, obj in deployments.items():
        assert "DB_POOL_MAX_SIZE" not in {env["name"] for env in _container(obj).get("env", [])}, name
    web = _container(deployments["web"])
    assert "command" not in web and "args" not in web


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_job_runs_the_migrations(entry):
    (job,) = _objects(entry, "Job").values()
    assert "manage.py migrate --noinput" in " ".join(_container(job)["command"])


def test_no_secret_with_real_values_is_committed():
    assert not _objects("", "Secret") and not _objects("overlays/prod", "Secret")
    (dev,) = _objects("overlays/dev", "Secret").values()
    values = {key: base64.b64decode(value).decode() for key, value in dev["data"].items()}
    for key, value in values.items():
        # The Fernet key spells its dev-ness once decoded.
        shown = base64.urlsafe_b64decode(value).decode() if key == "FIELD_ENCRYPTION_KEYS" else value
        assert "dev-only" in shown or key == "REDIS_ADDRESS", key
    # The only other Secret in the tree is the example, which no kustomization lists.
    files_with_secrets = {
        path.name for path in K8S.rglob("*.yaml") if re.search(r"^kind: Secret$", path.read_text(), re.M)
    }
    assert files_with_secrets == {"secret.example.yaml"}
    for path in K8S.rglob("kustomization.yaml"):
        assert "secret.example.yaml" not in yaml.safe_load(path.read_text()).get("resources", []), path
    example = yaml.safe_load((K8S / "base" / "secret.example.yaml").read_text())
    assert all("<" in value for value in example["stringData"].values())  # placeholders only


def test_dev_secret_names_one_redis_for_celery_and_keda():
    (dev,) = _objects("overlays/dev", "Secret").values()
    values = {key: base64.b64decode(value).decode() for key, value in dev["data"].items()}
    url = urlparse(values["REDIS_URL"])
    host, port = values["REDIS_ADDRESS"].split(":")
    assert host.split(".")[:2] == [url.hostname, "folder-chat-dev"] and int(port) == url.port
    assert values["REDIS_PASSWORD"] == url.password
    indexes = {
        t["metadata"]["databaseIndex"]
        for so in _objects("overlays/dev", "ScaledObject").values()
        for t in so["spec"]["triggers"]
    }
    assert indexes == {url.path.lstrip("/")}
    assert urlparse(values["DATABASE_URL"]).password == values["POSTGRES_PASSWORD"]


def test_dev_runs_its_own_postgres_and_valkey_and_the_single_watcher():
    stateful = _objects("overlays/dev", "StatefulSet")
    assert _container(stateful["postgres"])["image"].startswith("pgvector/pgvector:0.8.")
    assert _container(stateful["redis"])["image"].startswith("valkey/valkey:9")
    watcher = _objects("overlays/dev", "Deployment")["watcher"]
    assert watcher["spec"]["replicas"] == 1 and watcher["spec"]["strategy"] == {"type": "Recreate"}
    # The watcher and every role that reads local folders see them at the same path.
    for name in ("watcher", "web", "worker-indexing", "worker-small", "worker-sync"):
        mounts = _container(_objects("overlays/dev", "Deployment")[name])["volumeMounts"]
        assert {"name": "folders", "mountPath": "/data/folders"} in mounts, name
    assert "watcher" not in _objects("", "Deployment") and "watcher" not in _objects("overlays/prod", "Deployment")


def test_prod_runs_more_replicas_with_memory_requests_equal_to_limits():
    base_hpa, prod_hpa = (_objects(entry, "HorizontalPodAutoscaler")["web"]["spec"] for entry in ("", "overlays/prod"))
    assert prod_hpa["minReplicas"] > base_hpa["minReplicas"] and prod_hpa["maxReplicas"] > base_hpa["maxReplicas"]
    for name, scaler in _objects("overlays/prod", "ScaledObject").items():
        assert scaler["spec"]["minReplicaCount"] > _objects("", "ScaledObject")[name]["spec"]["minReplicaCount"]
    for name, obj in _objects("overlays/prod", "Deployment").items():
        if name == "web" or _queues_consumed(obj):
            resources = _container(obj)["resources"]
            assert resources["requests"]["memory"] == resources["limits"]["memory"], name
    assert {_container(obj)["image"] for obj in _objects("overlays/prod", "Deployment").values()} == {
        "registry.example.com/folder-chat:1.0.0"
    }

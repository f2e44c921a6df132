"""`GET /api/metrics/queues` and the admin's queues page: what waits in Valkey and who consumes it."""

from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from apps.core.queues import ALL_QUEUES, QueueName
from config.celery import app
from tests.support.servers import BASE_DIR, start_celery_worker, test_database_env
from workers.maintenance import ping

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user(username="operator", password="operator-password", is_staff=True)


@pytest.fixture
def empty_queues():
    app.control.purge()
    yield
    app.control.purge()


def test_staff_see_waiting_tasks_their_age_and_the_live_workers_per_queue(staff, empty_queues):
    log_path = BASE_DIR / "var" / f"test-queue-metrics-worker-{time.monotonic_ns()}.log"
    with start_celery_worker(env=test_database_env(), queues=[QueueName.AGENT.value], log_path=log_path, name="qm"):
        sent = time.time()
        # Nothing consumes `default` here: these wait, one of them in a lower priority's list.
        ping.apply_async(args=["first"])
        ping.apply_async(args=["low"], priority=5)
        ping.apply_async(args=["last"])
        time.sleep(0.5)
        client = APIClient()
        client.force_authenticate(user=staff)
        response = client.get("/api/metrics/queues")
        waited = time.time() - sent

    assert response.status_code == 200
    queues = {queue["name"]: queue for queue in response.json()["queues"]}
    assert set(queues) == set(ALL_QUEUES)
    default = queues["default"]
    assert default["depth"] == 3
    assert 0.5 <= default["oldest_wait_seconds"] <= waited
    assert (default["workers"], default["live_workers"]) == ([], 0)
    agent = queues["agent"]
    assert (agent["depth"], agent["oldest_wait_seconds"], agent["live_workers"]) == (0, None, 1)
    assert agent["workers"][0].startswith("qm-")


def test_queue_metrics_are_for_staff_only(user, empty_queues):
    client = APIClient()
    assert client.get("/api/metrics/queues").status_code == 401
    client.force_authenticate(user=user)
    response = client.get("/api/metrics/queues")
    assert response.status_code == 403
    assert response.json()["detail"] == "Only staff may see the queues: they hold every user's work."


def test_the_admin_index_links_the_queues_page_which_shows_each_queue(client, django_user_model, user, empty_queues):
    ping.apply_async(args=["waiting"])
    client.force_login(user)
    assert client.get("/admin/queues/").status_code == 302  # not staff: to the admin's login
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "root-password"))

    index = client.get("/admin/").content.decode()
    assert 'href="/admin/queues/"' in index and 'id="content-main"' in index  # the app list is still there
    page = client.get("/admin/queues/").content.decode()
    assert "<td>default</td>\n    <td>1</td>" in page
    assert "(nothing consumes it)" in page

import pytest
from django_celery_beat.models import PeriodicTask

from workers.maintenance import ping
from workers.queues import TASK_ROUTES, QueueName


@pytest.mark.worker
def test_task_round_trips_through_a_real_worker_process(celery_worker_process):
    result = ping.apply_async(args=["hello"])
    assert result.get(timeout=30) == "pong:hello"


def test_every_task_module_routes_to_a_declared_queue():
    declared = {queue.value for queue in QueueName}
    assert {route["queue"] for route in TASK_ROUTES.values()} <= declared


@pytest.mark.django_db
def test_beat_schedule_is_installed_idempotently(django_db_setup):
    from django.core.management import call_command

    call_command("install_beat_schedule")
    PeriodicTask.objects.filter(task="workers.sync.sync_due_folders").update(enabled=False)
    call_command("install_beat_schedule")
    tasks = {task.task: task for task in PeriodicTask.objects.exclude(task__startswith="celery.")}
    assert "workers.sync.sync_due_folders" in tasks
    assert tasks["workers.sync.sync_due_folders"].interval.every == 60
    assert tasks["workers.sync.sync_due_folders"].enabled is False  # an operator's change is kept

from fnmatch import fnmatch

import pytest
from django_celery_beat.models import PeriodicTask

from apps.core.queues import TASK_ROUTES, QueueName
from workers.maintenance import ping


@pytest.mark.worker
def test_task_round_trips_through_a_real_worker_process(celery_worker_process):
    result = ping.apply_async(args=["hello"])
    assert result.get(timeout=30) == "pong:hello"


def test_every_task_module_routes_to_a_declared_queue():
    from config.celery import app

    declared = {queue.value for queue in QueueName}
    assert {route["queue"] for route in TASK_ROUTES.values()} <= declared
    # Every task module the app imports has its route, and every task in them lands on that queue
    # (an unrouted task would go to the default queue and pass the check above unseen).
    assert {f"{module}.*" for module in app.conf.imports} <= set(TASK_ROUTES)
    app.loader.import_default_modules()
    tasks = sorted(name for name in app.tasks if name.startswith("workers."))
    assert len(tasks) >= len(app.conf.imports)
    for name in tasks:
        # A task routed by its own name (index_folder) is so before its module's pattern.
        (pattern,) = [name] if name in TASK_ROUTES else [pattern for pattern in TASK_ROUTES if fnmatch(name, pattern)]
        assert app.amqp.router.route({}, name)["queue"].name == TASK_ROUTES[pattern]["queue"], name


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

import os

from celery import Celery
from celery.signals import before_task_publish, worker_init, worker_process_init

from apps.core.queues import TASK_QUEUES, TASK_ROUTES, stamp_sent_at
from workers.leases import MessageLeases

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("folderchat")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = TASK_QUEUES
app.conf.task_routes = TASK_ROUTES
app.conf.task_default_queue = "default"
before_task_publish.connect(stamp_sent_at, weak=False)
app.conf.imports = (
    "workers.indexing",
    "workers.backfill",
    "workers.sync",
    "workers.organize",
    "workers.agent",
    "workers.evaluation",
    "workers.maintenance",
)
# A host killed outright: its messages come back within the visibility timeout (workers/leases.py).
app.steps["consumer"].add(MessageLeases)


def _tracing_start(**kwargs: object) -> None:
    # In each pool child, after the fork: the exporter's thread and connections do not survive one.
    from apps.core.tracing import tracing_configure

    tracing_configure(service_name="folder-chat-worker")


worker_process_init.connect(_tracing_start, weak=False)


def _metrics_serve(**kwargs: object) -> None:
    # In the worker's main process, before its pool starts: one endpoint for all its processes.
    from django.conf import settings

    from apps.core.metrics import worker_metrics_serve

    if settings.WORKER_METRICS_PORT:
        worker_metrics_serve(port=settings.WORKER_METRICS_PORT, address=settings.WORKER_METRICS_ADDRESS)


worker_init.connect(_metrics_serve, weak=False)

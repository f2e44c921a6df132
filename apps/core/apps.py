from typing import Any

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        from celery.signals import worker_process_init, worker_process_shutdown, worker_shutdown

        from apps.core.metrics import metrics_dead_processes_forget, metrics_process_ended

        metrics_dead_processes_forget()

        def started(**kwargs: Any) -> None:
            metrics_dead_processes_forget()

        def ended(**kwargs: Any) -> None:
            metrics_process_ended()

        # Celery's pool children start and end without Django starting again: their live gauges
        # are forgotten when they exit (or, killed, when the next one starts).
        worker_process_init.connect(started, weak=False)
        worker_process_shutdown.connect(ended, weak=False)
        worker_shutdown.connect(ended, weak=False)

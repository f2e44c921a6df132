from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from apps.core.beat import BEAT_SCHEDULE


class Command(BaseCommand):
    help = "Create or update the periodic tasks of apps/core/beat.py in django-celery-beat."

    def handle(self, *args: Any, **options: Any) -> None:
        for entry in BEAT_SCHEDULE:
            interval, _ = IntervalSchedule.objects.get_or_create(
                every=entry.every_seconds, period=IntervalSchedule.SECONDS
            )
            # An operator's edits to an existing entry (interval, enabled) are kept.
            _, created = PeriodicTask.objects.get_or_create(
                name=entry.name, defaults={"task": entry.task, "interval": interval}
            )
            self.stdout.write(f"{'created' if created else 'kept'}: {entry.name} ({entry.task})")

"""Every periodic task, by its name in workers/, in one place. `manage.py install_beat_schedule`
writes these into django-celery-beat's tables (where operators can then change them in admin)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PeriodicEntry:
    name: str
    task: str
    every_seconds: int


BEAT_SCHEDULE = [
    PeriodicEntry("Sync folders past their interval", "workers.sync.sync_due_folders", 60),
    PeriodicEntry("Backfill NULL search vectors (safety net)", "workers.backfill.backfill_search_vectors", 300),
    PeriodicEntry("Expire stale organization suggestions", "workers.organize.expire_suggestions", 3600),
    PeriodicEntry("Fail agent runs stuck in running", "workers.agent.fail_stale_runs", 120),
    PeriodicEntry("Re-queue files whose indexing task is gone", "workers.indexing.requeue_stale_claims", 300),
    # Only sets marked nightly (off by default) are run.
    PeriodicEntry("Run the nightly evaluation sets", "workers.evaluation.run_nightly_sets", 86400),
]

"""Task time limits, defined once: the task decorators in `workers/` read them, and so does every
claim or sweeper that must know when a task's worker is surely gone (a claim older than its task's
hard limit belongs to a dead worker)."""

from __future__ import annotations

from typing import Any, NamedTuple


class TaskLimit(NamedTuple):
    hard: int  # seconds: the worker process is killed
    soft: int | None = None  # seconds: SoftTimeLimitExceeded is raised in the task

    def options(self) -> dict[str, Any]:
        """The decorator options: `@shared_task(..., **LIMIT.options())`."""
        options: dict[str, Any] = {"time_limit": self.hard}
        if self.soft is not None:
            options["soft_time_limit"] = self.soft
        return options


INDEX_FOLDER = TaskLimit(1800, 1750)
INDEX_FILES = TaskLimit(900, 870)
BACKFILL = TaskLimit(300, 290)
SYNC_FOLDER = TaskLimit(1800, 1750)
# Above the agent's own total timeout plus a slow model's final answer: they only catch hangs.
AGENT_RUN = TaskLimit(330, 300)
# A whole evaluation run, its questions answered one after another: the run stops taking new
# questions one AGENT_RUN before the soft limit (apps.evaluation.execution), so it ends itself.
EVALUATION_RUN = TaskLimit(3600, 3540)
ORGANIZE_FILE = TaskLimit(300, 280)
BEAT_SWEEP = TaskLimit(60, 50)
PING = TaskLimit(10)

"""IndexingJob rows: the record of each indexing task, named by its Celery task id (the token)."""

from __future__ import annotations

from django.db.models import F
from django.utils import timezone

from apps.library.models import IndexingJob, JobKind, JobStatus


def indexing_job_start(
    *, folder_id: int, token: str, kind: str = JobKind.INDEX_FILE, file_id: int | None = None
) -> int:
    """The job of this task (``token``), reused when the task is delivered again after a crash."""
    jobs = IndexingJob.objects.filter(folder_id=folder_id, kind=kind, celery_task_id=token)
    jobs = jobs.filter(file_id=file_id) if file_id is not None else jobs.filter(file__isnull=True)
    job = (
        jobs.values_list("pk", flat=True).first()
        or IndexingJob.objects.create(folder_id=folder_id, file_id=file_id, kind=kind, celery_task_id=token).pk
    )
    IndexingJob.objects.filter(pk=job).update(
        status=JobStatus.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now(), error=""
    )
    return job


def indexing_job_finish(*, job_id: int, status: str, error: str = "") -> None:
    IndexingJob.objects.filter(pk=job_id).update(status=status, error=error[:4000], finished_at=timezone.now())

"""IndexingJob rows: the record of each indexing task, named by its Celery task id (the token)."""

from __future__ import annotations

from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.core.stored_messages import StoredMessage, stored_message_fields
from apps.library.models import FileStatus, IndexingJob, JobKind, JobStatus

# What a job's record says when the file's own outcome does not (IndexingJob.error).
SOURCE_RETRYING = StoredMessage(gettext_noop("source unavailable; retrying"))
TASK_LOST = StoredMessage(gettext_noop("its task was lost; queued again"))


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
        status=JobStatus.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now(), error="", error_i18n=None
    )
    return job


def indexing_job_skip(*, job_id: int, file_status: str) -> None:
    """The task found nothing to do for its file: another task holds it, or it is settled."""
    if file_status == FileStatus.INDEXING:
        note = StoredMessage(gettext_noop("claimed by another task"))
    else:
        note = StoredMessage(gettext_noop("nothing to do: file is %(status)s"), status=file_status)
    indexing_job_finish(job_id=job_id, status=JobStatus.SUCCEEDED, error=note)


def indexing_job_finish(*, job_id: int, status: str, error: str = "") -> None:
    IndexingJob.objects.filter(pk=job_id).update(
        status=status, finished_at=timezone.now(), **stored_message_fields("error", error)
    )

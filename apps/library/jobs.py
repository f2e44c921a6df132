"""IndexingJob rows: the record of each indexing task, named by its Celery task id (the token)."""

from __future__ import annotations

from collections.abc import Mapping

from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.core.stored_messages import StoredMessage, stored_message_fields
from apps.library.models import FileStatus, IndexingJob, JobKind, JobStatus

# What a job's record says when the file's own outcome does not (IndexingJob.error).
SOURCE_RETRYING = StoredMessage(gettext_noop("source unavailable; retrying"))
TASK_LOST = StoredMessage(gettext_noop("its task was lost; queued again"))


def indexing_job_start(*, folder_id: int, token: str, kind: str = JobKind.INDEX_FOLDER) -> int:
    """The folder job of this task (``token``), reused when the task is delivered again after a crash."""
    jobs = IndexingJob.objects.filter(folder_id=folder_id, kind=kind, celery_task_id=token, file__isnull=True)
    job = (
        jobs.values_list("pk", flat=True).first()
        or IndexingJob.objects.create(folder_id=folder_id, kind=kind, celery_task_id=token).pk
    )
    _jobs_running(job_ids=[job])
    return job


def indexing_file_jobs_start(*, token: str, folder_of: Mapping[int, int]) -> dict[int, int]:
    """The jobs (file id -> job id) of this task's files (``folder_of``: file id -> folder id),
    running: the rows ``files_enqueue`` made, or new ones for files that came another way (inline
    runs, tests). A few statements for the whole group, whatever its size."""
    jobs = IndexingJob.objects.filter(kind=JobKind.INDEX_FILE, celery_task_id=token, file_id__in=list(folder_of))
    found = dict(jobs.values_list("file_id", "pk"))
    missing = IndexingJob.objects.bulk_create(
        IndexingJob(folder_id=folder_id, file_id=file_id, kind=JobKind.INDEX_FILE, celery_task_id=token)
        for file_id, folder_id in folder_of.items()
        if file_id not in found
    )
    found.update((job.file_id, job.pk) for job in missing if job.file_id is not None)
    _jobs_running(job_ids=list(found.values()))
    return found


def _jobs_running(*, job_ids: list[int]) -> None:
    IndexingJob.objects.filter(pk__in=job_ids).update(
        status=JobStatus.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now(), error="", error_i18n=None
    )


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


class IndexingJobFinishes:
    """The file jobs a task finished, written in one statement when it ends (``flush``) rather
    than one per file; each keeps its own finish time. Should the process die first, the jobs
    stay running until the redelivered task finds their files settled and finishes them."""

    def __init__(self) -> None:
        self._jobs: list[IndexingJob] = []

    def add(self, *, job_id: int, status: str, error: str = "") -> None:
        fields = stored_message_fields("error", error)
        self._jobs.append(IndexingJob(pk=job_id, status=status, finished_at=timezone.now(), **fields))

    def flush(self) -> None:
        if self._jobs:
            IndexingJob.objects.bulk_update(self._jobs, ["status", "finished_at", "error", "error_i18n"])
            self._jobs = []

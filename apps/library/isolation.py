"""When an ``index_files`` task runs out of time: only the file that cannot finish may fail.

Celery raises ``SoftTimeLimitExceeded`` in the task some seconds before it kills the worker. A
group's files that are not done by then are not at fault (one slow neighbour used the time): they
go back to pending and are queued again, one per task. A task of one file that runs out of time
is that file's own doing: it fails with the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from django.conf import settings
from django.db.models import Q
from django.utils.translation import gettext_noop

from apps.core import task_limits
from apps.core.metrics import file_outcome_observe
from apps.core.stored_messages import StoredMessage, stored_message_fields
from apps.library.jobs import indexing_job_finish
from apps.library.models import File, FileStatus, JobStatus

logger = logging.getLogger(__name__)


def files_overtime(
    *, file_ids: Sequence[int], token: str, job_ids: Mapping[int, int], alone: bool
) -> dict[int, list[int]]:
    """The task holding ``token`` ran out of time before finishing ``file_ids``: the files to
    queue again one per task, by folder. ``alone``: the task had only that file, which fails."""
    if not file_ids:
        return {}
    if alone:
        _fail(file_ids=file_ids, token=token, job_ids=job_ids)
        return {}
    # Ours, or not claimed yet (the loop never reached them); anything else belongs to another run.
    ours = Q(status=FileStatus.INDEXING, index_claim=token) | ~Q(status=FileStatus.INDEXING)
    rows = File.objects.filter(ours, pk__in=file_ids)
    by_folder: dict[int, list[int]] = {}
    for file_id, folder_id in rows.values_list("pk", "folder_id"):
        by_folder.setdefault(folder_id, []).append(file_id)
    File.objects.filter(pk__in=file_ids, status=FileStatus.INDEXING, index_claim=token).update(
        status=FileStatus.PENDING, index_claim="", index_started_at=None
    )
    note = StoredMessage(gettext_noop("re-queued on its own: its group ran out of time"))
    for file_id in file_ids:
        if file_id in job_ids:
            indexing_job_finish(job_id=job_ids[file_id], status=JobStatus.SUCCEEDED, error=note)
    logger.warning("group ran out of time; re-queueing its unfinished files one per task: %s", by_folder)
    return by_folder


def _fail(*, file_ids: Sequence[int], token: str, job_ids: Mapping[int, int]) -> None:
    limit = task_limits.INDEX_FILES.soft or task_limits.INDEX_FILES.hard
    for file_id, size in File.objects.filter(pk__in=file_ids).values_list("pk", "size"):
        error = StoredMessage(
            gettext_noop(
                "too large to index in %(minutes)s minutes: %(size)s MB file (the indexing task's time limit;"
                " the file's own budget is %(budget)s seconds)"
            ),
            minutes=limit // 60,
            size=f"{size / 1_000_000:.1f}",
            budget=f"{settings.INDEX_FILE_TIME_BUDGET_SECONDS:g}",
        )
        if File.objects.filter(pk=file_id, status=FileStatus.INDEXING, index_claim=token).update(
            status=FileStatus.FAILED, index_claim="", **stored_message_fields("error", error)
        ):
            file_outcome_observe(outcome=FileStatus.FAILED)
        if file_id in job_ids:
            indexing_job_finish(job_id=job_ids[file_id], status=JobStatus.FAILED, error=error)

"""A group of files (one ``index_files`` task) is claimed, started and finished as a group: the
statements per file are only the file's own write and event, whatever the group's size."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.library import file_steps
from apps.library.indexing import files_index, folder_index
from apps.library.models import File, IndexingJob
from tests.support.files import write

pytestmark = pytest.mark.django_db


def queued_group(root, folder, count: int, body: str = "") -> tuple[str, list[int]]:
    for number in range(count):
        text = body or f"Note {number}: the meeting moved to room {number + 100}."
        write(root, f"notes/note-{number:03}.txt", text)
    folder_index(folder_id=folder.pk)  # queued mode: job rows made, tasks sent after commit (none here)
    tokens = set(IndexingJob.objects.filter(folder=folder, kind="index_file").values_list("celery_task_id", flat=True))
    assert len(tokens) == 1  # small notes: one group
    (token,) = tokens
    file_ids = list(IndexingJob.objects.filter(celery_task_id=token).order_by("pk").values_list("file_id", flat=True))
    return token, file_ids


def test_a_group_costs_a_few_statements_a_file_whatever_its_size(root, folder):
    token, file_ids = queued_group(root, folder, 40)
    with CaptureQueriesContext(connection) as queries:
        outcomes = files_index(file_ids=file_ids, task_id=token)
    assert sorted(outcome.status for outcome in outcomes) == ["indexed"] * 40
    # Per file: its row and chunks swapped (UPDATE, DELETE, COPY) and who its event is copied to.
    # Claiming, starting and finishing the jobs, and the recount, are a few statements per group
    # (one by one they were 12 statements a file).
    # (The test's transaction turns each file's into a savepoint: not statements of the product's.)
    statements = [query["sql"] for query in queries if "SAVEPOINT" not in query["sql"]]
    assert len(statements) <= 4 * 40 + 20, statements
    claims = [sql for sql in statements if sql.startswith('UPDATE "library_file" SET "status"')]
    assert len(claims) == 1 + 40  # one claim for the group, one write per file


def test_each_job_of_a_group_ends_with_its_own_outcome_and_time(root, folder, monkeypatch):
    token, file_ids = queued_group(root, folder, 5)
    broken = File.objects.get(pk=file_ids[2])
    held = File.objects.get(pk=file_ids[4])
    File.objects.filter(pk=held.pk).update(status="indexing", index_claim="other", index_started_at=timezone.now())
    original = file_steps.chunks_replace

    def failing(*, file_id, **kwargs):
        if file_id == broken.pk:
            raise RuntimeError("disk full")
        return original(file_id=file_id, **kwargs)

    monkeypatch.setattr(file_steps, "chunks_replace", failing)
    before = timezone.now()
    with pytest.raises(RuntimeError, match="disk full"):
        files_index(file_ids=file_ids, task_id=token)

    jobs = {job.file_id: job for job in IndexingJob.objects.filter(celery_task_id=token)}
    assert {file_id: jobs[file_id].status for file_id in file_ids} == {
        file_ids[0]: "succeeded",
        file_ids[1]: "succeeded",
        broken.pk: "failed",
        file_ids[3]: "succeeded",
        held.pk: "succeeded",  # nothing to do: another task holds it
    }
    assert "disk full" in jobs[broken.pk].error and jobs[held.pk].error == "claimed by another task"
    assert all(job.attempts == 1 and job.started_at >= before for job in jobs.values())
    finished = [jobs[file_id].finished_at for file_id in file_ids[:4]]
    assert finished == sorted(finished) and len(set(finished)) == 4  # each its own time, in order
    assert File.objects.get(pk=held.pk).index_claim == "other"
    assert dict(File.objects.filter(pk__in=file_ids[:4]).values_list("pk", "status")) == {
        file_ids[0]: "indexed",
        file_ids[1]: "indexed",
        broken.pk: "failed",
        file_ids[3]: "indexed",
    }


def test_a_group_detects_its_folder_s_language_once(root, folder, monkeypatch):
    from apps.library import language

    token, file_ids = queued_group(root, folder, 5, body="The committee reviewed the quarterly budget report. " * 10)
    detected = []
    real = language.language_detect
    monkeypatch.setattr(language, "language_detect", lambda *, text: detected.append(text) or real(text=text))
    files_index(file_ids=file_ids, task_id=token)
    folder.refresh_from_db()
    # The group's files share one Folder object: once the first sets the language, the rest see it.
    assert folder.language == "english" and len(detected) == 1

import datetime as dt
import json
import socket

import pytest
from django.db.models import Q
from django.utils import timezone

from apps.core import task_limits
from apps.core.events import events_after, folder_channel
from apps.embeddings.providers import get_embedder
from apps.library.backfill import search_vectors_backfill
from apps.library.indexing import (
    file_groups,
    file_index,
    files_enqueue,
    files_index,
    files_stale_claims_requeue,
    folder_index,
)
from apps.library.models import Chunk, File, Folder, IndexingJob
from apps.library.progress import folder_counters_refresh
from tests.support.documents import docx_bytes, encrypted_pdf_bytes, pdf_bytes
from tests.support.files import write

pytestmark = pytest.mark.django_db

LONG_NOTE = "# Taxes\n" + " ".join(f"Deduction rule {n} applies to Q4-2024 filings." for n in range(200))


@pytest.fixture
def mixed(root):
    write(root, "notes/taxes.md", LONG_NOTE)
    write(root, "notes/plain.txt", "Call Dana Whitfield about invoice INV-20931.")
    write(root, "web/page.html", "<h1>Budget</h1><script>x()</script><p>Rent is 1200 per month.</p>")
    write(root, "scans/report.pdf", pdf_bytes(["Quarterly report page one.", "Page two has totals."]))
    write(root, "work/handbook.docx", docx_bytes([("Heading 1", "Travel"), ("", "Trains only.")]))
    write(root, "finance/ledger.csv", "date,code\n2024-12-01,INV-20931\n")
    write(root, "finance/client.json", json.dumps({"client": {"name": "Dana Whitfield"}}))
    write(root, "scans/broken.pdf", b"%PDF-1.4\n this is not a pdf")
    write(root, "scans/locked.pdf", encrypted_pdf_bytes())
    write(root, "photos/cat.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    write(root, "empty.txt", "")
    return root


def statuses(folder):
    return dict(File.objects.filter(folder=folder).values_list("path", "status"))


def test_inline_folder_index_indexes_each_type_and_records_why_others_were_not(mixed, folder):
    result = folder_index(folder_id=folder.pk, inline=True)
    assert result is not None and result.added == 11
    assert statuses(folder) == {
        "notes/taxes.md": "indexed",
        "notes/plain.txt": "indexed",
        "web/page.html": "indexed",
        "scans/report.pdf": "indexed",
        "work/handbook.docx": "indexed",
        "finance/ledger.csv": "indexed",
        "finance/client.json": "indexed",
        "scans/broken.pdf": "failed",
        "scans/locked.pdf": "failed",
        "photos/cat.png": "failed",
        "empty.txt": "skipped",
    }
    errors = dict(File.objects.filter(folder=folder).exclude(error="").values_list("path", "error"))
    assert errors["scans/locked.pdf"] == "password-protected PDF"
    assert errors["scans/broken.pdf"].startswith("unreadable PDF")
    assert errors["photos/cat.png"].startswith("unreadable image")
    assert errors["empty.txt"] == "no text to index"
    folder.refresh_from_db()
    assert (folder.files_total, folder.files_indexed, folder.status) == (11, 7, "ready")
    assert folder.last_synced_at is not None
    chunks = Chunk.objects.filter(folder=folder)
    assert chunks.count() == sum(File.objects.filter(folder=folder).values_list("chunk_count", flat=True))
    assert not chunks.filter(Q(search_vector__isnull=True) | Q(embedding__isnull=True)).exists()
    taxes = File.objects.get(folder=folder, path="notes/taxes.md")
    assert taxes.chunk_count > 3 and taxes.embedding is not None and taxes.indexed_checksum == taxes.checksum
    assert taxes.token_count == sum(Chunk.objects.filter(file=taxes).values_list("token_count", flat=True)) > 0
    assert taxes.preview.startswith("# Taxes Deduction rule 0") and "Q4-2024" in taxes.digest
    assert Chunk.objects.filter(file=taxes, chunk_index=1).get().location["heading"] == ["Taxes"]
    assert Chunk.objects.get(file__path="scans/report.pdf", chunk_index=0).location["page"] == 1
    assert File.objects.filter(folder=folder, search_vector__isnull=True).count() == 0


def test_reindexing_unchanged_files_is_a_noop_that_embeds_nothing(mixed, folder, monkeypatch):
    folder_index(folder_id=folder.pk, inline=True)
    before = list(Chunk.objects.filter(folder=folder).order_by("id").values_list("id", "file_id", "chunk_index"))
    embedder = get_embedder()
    calls = []
    monkeypatch.setattr(embedder, "embed_documents", lambda texts: calls.append(texts))
    result = folder_index(folder_id=folder.pk, inline=True)
    # Failed files are retried; nothing indexed is read, parsed or embedded again.
    assert set(File.objects.filter(pk__in=result.to_index).values_list("status", flat=True)) == {"failed"}
    for file in File.objects.filter(folder=folder, status="indexed"):
        assert file_index(file_id=file.pk).noop
    assert calls == []
    after = list(Chunk.objects.filter(folder=folder).order_by("id").values_list("id", "file_id", "chunk_index"))
    assert after == before


def test_changed_content_replaces_the_chunks_with_exactly_one_new_set(root, folder):
    path = write(root, "note.md", LONG_NOTE)
    folder_index(folder_id=folder.pk, inline=True)
    file = File.objects.get(folder=folder)
    old_ids = set(Chunk.objects.filter(file=file).values_list("id", flat=True))
    path.write_text("# Short\nOnly one chunk now about INV-20931.")
    folder_index(folder_id=folder.pk, inline=True)
    file.refresh_from_db()
    chunks = list(Chunk.objects.filter(file=file).order_by("chunk_index"))
    assert [chunk.chunk_index for chunk in chunks] == [0] == list(range(file.chunk_count))
    assert "INV-20931" in chunks[0].text and not old_ids & {chunk.id for chunk in chunks}
    assert file.status == "indexed" and file.indexed_checksum == file.checksum


def test_claims_let_one_task_work_and_take_back_redeliveries_and_stale_leases(root, folder):
    write(root, "a.txt", "alpha")
    folder_index(folder_id=folder.pk)  # queued mode: rows created, tasks sent after commit (none here)
    file = File.objects.get(folder=folder)
    File.objects.filter(pk=file.pk).update(status="indexing", index_claim="other", index_started_at=_now())
    busy = file_index(file_id=file.pk, task_id="mine")
    assert busy.noop and File.objects.get(pk=file.pk).status == "indexing"
    redelivered = file_index(file_id=file.pk, task_id="other")
    assert not redelivered.noop and redelivered.status == "indexed"
    File.objects.filter(pk=file.pk).update(status="indexing", index_claim="dead", index_started_at=_now(hours=-2))
    assert file_index(file_id=file.pk, task_id="fresh").status == "indexed"
    assert Chunk.objects.filter(file=file).count() == 1
    job = IndexingJob.objects.get(file=file, celery_task_id="other")
    assert (job.status, job.attempts) == ("succeeded", 1)


def test_a_redelivered_folder_run_finishes_its_own_job_instead_of_leaving_it_running(root, folder):
    write(root, "a.txt", "alpha")
    folder_index(folder_id=folder.pk, task_id="listing")
    # As if its worker died mid-listing: the job is still running when the message comes back.
    IndexingJob.objects.filter(celery_task_id="listing").update(status="running", finished_at=None)
    folder_index(folder_id=folder.pk, task_id="listing")
    (job,) = IndexingJob.objects.filter(folder=folder, kind="index_folder")
    assert (job.celery_task_id, job.status, job.attempts) == ("listing", "succeeded", 2)
    assert job.finished_at is not None


def test_oversized_file_is_skipped_and_loses_stale_chunks(root, folder, settings):
    path = write(root, "grow.txt", "small enough")
    folder_index(folder_id=folder.pk, inline=True)
    settings.INDEX_MAX_FILE_BYTES = 20
    path.write_text("now this file is far too large to index")
    folder_index(folder_id=folder.pk, inline=True)
    file = File.objects.get(folder=folder)
    assert file.status == "skipped" and "INDEX_MAX_FILE_BYTES" in file.error
    assert not Chunk.objects.filter(file=file).exists() and file.chunk_count == 0


def test_unexpected_errors_mark_the_file_failed_and_propagate(root, folder, monkeypatch):
    write(root, "a.txt", "alpha")
    folder_index(folder_id=folder.pk)
    file = File.objects.get(folder=folder)
    monkeypatch.setattr("apps.library.file_prepare.parse_document", _boom)
    with pytest.raises(RuntimeError):
        file_index(file_id=file.pk, task_id="t1")
    file.refresh_from_db()
    assert file.status == "failed" and file.error == "RuntimeError: parser exploded"
    assert IndexingJob.objects.get(celery_task_id="t1").status == "failed"


def test_a_transient_failure_keeps_the_last_good_chunks_searchable(root, folder, monkeypatch):
    write(root, "a.txt", "alpha beta gamma")
    folder_index(folder_id=folder.pk, inline=True)
    file = File.objects.get(folder=folder)
    before = list(Chunk.objects.filter(file=file).values_list("id", "text"))
    assert before
    write(root, "a.txt", "alpha beta gamma delta")
    folder_index(folder_id=folder.pk)  # notices the new checksum and queues a re-index
    monkeypatch.setattr("apps.library.file_prepare.parse_document", _boom)
    with pytest.raises(RuntimeError):
        file_index(file_id=file.pk, task_id="t2")
    file.refresh_from_db()
    assert file.status == "failed" and "parser exploded" in file.error
    assert list(Chunk.objects.filter(file=file).values_list("id", "text")) == before


def test_inbox_files_queue_an_organize_suggestion_on_commit(
    root, folder, monkeypatch, django_capture_on_commit_callbacks
):
    write(root, "inbox/receipt.txt", "Receipt for INV-20931")
    write(root, "notes/other.txt", "not in the inbox")
    sent = []
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        folder_index(folder_id=folder.pk, inline=True)
    assert sent == [File.objects.get(path="inbox/receipt.txt").pk]


def test_deferred_search_vectors_stay_null_until_the_backfill(
    root, folder, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.INDEX_DEFER_SEARCH_VECTOR = True
    write(root, "a.md", LONG_NOTE)
    folder_index(folder_id=folder.pk)
    file = File.objects.get(folder=folder)
    queued = []
    monkeypatch.setattr("apps.library.enqueue.backfill_search_vectors", lambda: queued.append(1))
    with django_capture_on_commit_callbacks(execute=True):
        file_index(file_id=file.pk)
    assert queued == [1]
    assert (
        Chunk.objects.filter(file=file, search_vector__isnull=True).count()
        == file.__class__.objects.get(pk=file.pk).chunk_count
    )
    assert search_vectors_backfill().rows > 0
    assert not Chunk.objects.filter(file=file, search_vector__isnull=True).exists()


def test_each_file_publishes_a_progress_event_with_counts(root, folder):
    write(root, "a.txt", "alpha")
    write(root, "b.exe", b"MZ\x90\x00\x03")
    folder_index(folder_id=folder.pk, inline=True)
    events = events_after(channel=folder_channel(folder.pk))
    files = [event.data for event in events if event.type == "file"]
    assert sorted((data["path"], data["status"]) for data in files) == [("a.txt", "indexed"), ("b.exe", "skipped")]
    assert files[-1]["files_done"] == files[-1]["files_total"] == 2 and files[-1]["files_indexed"] == 1
    assert events[-1].type == "scan" and events[-1].data["folder_status"] == "ready"


def test_a_run_recounts_its_folder_after_a_pause_and_always_after_its_last_file(root, folder, monkeypatch):
    for number in range(6):
        write(root, f"note-{number}.txt", f"Note number {number}.")
    # A pause longer than the run: the first file recounts, then only the last one.
    monkeypatch.setattr("apps.library.progress.RECOUNT_PAUSE_SECONDS", 600.0)
    folder_index(folder_id=folder.pk, inline=True)
    files = [event.data for event in events_after(channel=folder_channel(folder.pk)) if event.type == "file"]
    counted = [data["path"] for data in files if "files_total" in data]
    assert len(files) == 6 and counted == [files[0]["path"], files[-1]["path"]]
    assert files[-1]["files_done"] == files[-1]["files_total"] == 6 and files[-1]["folder_status"] == "ready"
    folder.refresh_from_db()
    assert (folder.status, folder.files_total, folder.files_indexed) == ("ready", 6, 6)


def test_counters_are_recounted_not_incremented(root, folder):
    write(root, "a.txt", "alpha")
    folder_index(folder_id=folder.pk, inline=True)
    Folder.objects.filter(pk=folder.pk).update(files_total=99, files_indexed=42)
    counts = folder_counters_refresh(folder_id=folder.pk)
    assert (counts.total, counts.indexed) == (1, 1)
    folder.refresh_from_db()
    assert (folder.files_total, folder.files_indexed) == (1, 1)


def test_queued_mode_sends_one_task_per_group_of_files_after_commit(
    root, folder, monkeypatch, django_capture_on_commit_callbacks
):
    write(root, "a.txt", "alpha")
    write(root, "b.txt", "beta")
    sent = []
    monkeypatch.setattr(
        "apps.library.enqueue.index_files", lambda file_ids, task_id, **options: sent.append((file_ids, task_id))
    )
    with django_capture_on_commit_callbacks(execute=True):
        folder_index(folder_id=folder.pk)
    jobs = dict(IndexingJob.objects.filter(kind="index_file").values_list("file_id", "celery_task_id"))
    # Two small files fill no embedding batch: one task for both, its id naming both jobs.
    ((file_ids, task_id),) = sent
    assert sorted(file_ids) == sorted(jobs) and set(jobs.values()) == {task_id}
    folder.refresh_from_db()
    assert folder.status == "indexing"
    with django_capture_on_commit_callbacks(execute=True):
        files_enqueue(folder_id=folder.pk, file_ids=[])
    assert len(sent) == 1


def test_inline_runs_group_small_files_into_full_embedding_batches(root, folder, settings, monkeypatch):
    settings.EMBEDDING_BATCH_SIZE = 2  # groups aim at 4 chunks: small files share a group, big ones end it
    for name in ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"]:
        write(root, name, "word " * (3000 if name == "c.txt" else 10))
    folder_index(folder_id=folder.pk)
    ids = dict(File.objects.values_list("path", "pk"))
    groups = file_groups(file_ids=[ids[name] for name in sorted(ids)])
    assert [[path for path, pk in sorted(ids.items()) if pk in group] for group in groups] == [
        ["a.txt", "b.txt", "c.txt"],
        ["d.txt", "e.txt"],
    ]
    calls = []
    embedder = get_embedder()
    real = embedder.embed_documents
    monkeypatch.setattr(embedder, "embed_documents", lambda texts: calls.append(len(texts)) or real(texts))
    folder_index(folder_id=folder.pk, inline=True)
    assert set(calls) == {2}  # one file at a time would have sent single-chunk batches
    assert statuses(folder) == dict.fromkeys(ids, "indexed")


def test_a_group_indexes_every_file_even_when_one_fails_unexpectedly(root, folder, monkeypatch):
    write(root, "a.txt", "alpha")
    write(root, "b.txt", "beta")
    write(root, "c.txt", "gamma")
    folder_index(folder_id=folder.pk)
    ids = list(File.objects.order_by("path").values_list("pk", flat=True))
    from apps.library import file_prepare, indexing

    real = file_prepare.parse_document

    def parse(**kwargs):
        if kwargs["name"] == "b.txt":
            raise RuntimeError("parser exploded")
        return real(**kwargs)

    monkeypatch.setattr(file_prepare, "parse_document", parse)
    seen = []
    with pytest.raises(RuntimeError):
        indexing.files_index(file_ids=ids, task_id="group", on_outcome=seen.append)
    assert statuses(folder) == {"a.txt": "indexed", "b.txt": "failed", "c.txt": "indexed"}
    assert sorted(outcome.path for outcome in seen) == ["a.txt", "b.txt", "c.txt"]
    assert Chunk.objects.filter(folder=folder).count() == 2


def test_missing_folder_root_puts_the_folder_in_error(root, folder):
    root.rmdir()
    assert folder_index(folder_id=folder.pk) is None
    folder.refresh_from_db()
    assert folder.status == "error" and "no longer exists" in folder.last_error
    assert f"on worker host {socket.gethostname()}" in folder.last_error


def test_a_file_read_on_a_host_without_its_folder_fails_with_the_folder_s_reason(root, folder):
    # Listed on the host that holds the folder; indexed by a worker on a host that does not.
    write(root, "a.txt", "alpha words")
    folder_index(folder_id=folder.pk, inline=True)
    write(root, "b.txt", "beta words")
    folder_index(folder_id=folder.pk)  # b.txt pending, its task not run here
    b = File.objects.get(folder=folder, path="b.txt")
    (root / "a.txt").unlink()
    (root / "b.txt").unlink()
    root.rmdir()
    outcome = file_index(file_id=b.pk)
    assert outcome is not None and outcome.status == "failed"
    b.refresh_from_db()
    assert b.status == "failed" and f"no longer exists on worker host {socket.gethostname()}" in b.error
    assert "run the sync and indexing workers on the host that holds it" in b.error
    # The file indexed before keeps its chunks: nothing was lost for the folder being elsewhere.
    assert File.objects.get(folder=folder, path="a.txt").status == "indexed"


def _boom(**kwargs):
    raise RuntimeError("parser exploded")


def _now(hours: int = 0):
    import datetime as dt

    from django.utils import timezone

    return timezone.now() + dt.timedelta(hours=hours)


def test_force_reindexes_unchanged_files(root, folder):
    write(root, "a.txt", "alpha")
    folder_index(folder_id=folder.pk, inline=True)
    before = set(Chunk.objects.filter(folder=folder).values_list("id", flat=True))
    folder_index(folder_id=folder.pk, inline=True, force=True)
    after = set(Chunk.objects.filter(folder=folder).values_list("id", flat=True))
    assert len(after) == 1 and not before & after


def test_keyword_statistics_follow_the_folder_once_its_run_settles(root, folder, settings):
    from apps.search.models import FolderTermStats

    write(root, "a.md", LONG_NOTE)
    write(root, "b.txt", "Invoice INV-20931")
    folder_index(folder_id=folder.pk, inline=True)
    stats = FolderTermStats.objects.get(folder_id=folder.pk)
    assert stats.chunk_count == Chunk.objects.filter(folder=folder).count()
    (root / "a.md").unlink()
    folder_index(folder_id=folder.pk, inline=True)  # a deletion alone changes the chunks too
    assert FolderTermStats.objects.get(folder_id=folder.pk).chunk_count == 1
    settings.INDEX_DEFER_SEARCH_VECTOR = True
    write(root, "c.md", LONG_NOTE)
    folder_index(folder_id=folder.pk, inline=True)  # deferred: the backfill refreshes them
    assert FolderTermStats.objects.get(folder_id=folder.pk).chunk_count == Chunk.objects.filter(folder=folder).count()


def test_files_left_indexing_by_a_lost_task_are_queued_again_once(
    root, folder, monkeypatch, django_capture_on_commit_callbacks
):
    write(root, "a.txt", "alpha words")
    write(root, "b.txt", "beta words")
    sent: list[tuple[str, list[int]]] = []
    monkeypatch.setattr(
        "apps.library.enqueue.index_files", lambda file_ids, task_id, **options: sent.append((task_id, file_ids))
    )
    folder_index(folder_id=folder.pk)
    a, b = File.objects.filter(folder=folder).order_by("path")
    # a.txt: claimed by a task whose host died and whose message the broker lost, past the task's
    # hard time limit; b.txt: claimed by a task still within it, so still possibly alive.
    dead = timezone.now() - dt.timedelta(seconds=task_limits.INDEX_FILES.hard + 5)
    File.objects.filter(pk=a.pk).update(status="indexing", index_claim="lost", index_started_at=dead)
    File.objects.filter(pk=b.pk).update(status="indexing", index_claim="alive", index_started_at=timezone.now())
    IndexingJob.objects.filter(file=a).update(celery_task_id="lost", status="running")
    sent.clear()

    with django_capture_on_commit_callbacks(execute=True):
        assert files_stale_claims_requeue() == 1
    assert files_stale_claims_requeue() == 0  # pending now: a second sweep queues nothing more
    ((token, group),) = sent
    assert group == [a.pk] and token != "lost"
    assert statuses(folder) == {"a.txt": "pending", "b.txt": "indexing"}
    lost = IndexingJob.objects.get(file=a, celery_task_id="lost")
    assert (lost.status, lost.error) == ("failed", "its task was lost; queued again")

    files_index(file_ids=group, task_id=token)  # the re-queued task, as a worker runs it
    assert statuses(folder) == {"a.txt": "indexed", "b.txt": "indexing"}
    assert Chunk.objects.filter(file=a).count() == File.objects.get(pk=a.pk).chunk_count == 1

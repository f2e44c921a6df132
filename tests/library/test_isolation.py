"""No file can fail another: a per-file time budget, text caps, and a group that runs out of
time hands its unfinished files back one per task."""

import gc
import signal
import time
from contextlib import contextmanager

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.core.management import call_command

from apps.core.queues import ALL_QUEUES
from apps.library.indexing import files_index, folder_index
from apps.library.models import Chunk, File, IndexingJob
from apps.search.selectors import chunk_search
from apps.search.types import SearchMode
from tests.support import junk_samples as samples
from tests.support.documents import long_log_pages, pdfium_pdf_bytes
from tests.support.files import write
from tests.support.servers import BASE_DIR, start_celery_worker, test_database_env
from tests.support.waiting import wait_for

BIG_TEXT_CHARS = 1_900_000  # under INDEX_MAX_TEXT_CHARS; about 37 budget checks while chunking
# Chunking that much takes about 0.2 s here, as long as the soft limits and budgets below: each of
# its budget checks waits this long first, so those limits land in the middle of the slow file.
CHUNKING_PAUSE_SECONDS = 0.05


def big_prose() -> str:
    text = samples.readme()
    return (text * (BIG_TEXT_CHARS // len(text) + 1))[:BIG_TEXT_CHARS]


def neighbours(root):
    write(root, "a-notes.md", "# Lease\n\nThe lease renews on the first of March.")
    write(root, "b-invoice.txt", "Invoice INV-4411 is due in thirty days.")
    write(root, "c-manual.md", big_prose())
    write(root, "d-textwrap.py", samples.hand_written_python())


def statuses(folder):
    return dict(File.objects.filter(folder=folder).values_list("path", "status"))


def error_of(folder, path):
    return File.objects.get(folder=folder, path=path).error


@pytest.fixture(autouse=True)
def fixed_text_cap(settings):
    """These tests shrink the time budget to see it stop a long file: a fixed text cap keeps the
    one sized to the budget from skipping that file before it starts."""
    settings.INDEX_MAX_TEXT_CHARS = 5_000_000


@pytest.fixture
def slow_chunking(monkeypatch):
    """Chunking a long text takes seconds, as on a busy worker, not the fraction of a second that
    races the limits below (the slow file could finish just as its limit fired)."""
    from apps.library import chunking

    check = chunking.budget_check

    def paused_check(stage):
        time.sleep(CHUNKING_PAUSE_SECONDS)
        check(stage)

    monkeypatch.setattr(chunking, "budget_check", paused_check)


@contextmanager
def soft_time_limit_after(seconds):
    """What Celery's prefork pool does at a task's soft time limit: a signal raises in the task."""

    def raise_soft_limit(signum, frame):
        raise SoftTimeLimitExceeded()

    previous = signal.signal(signal.SIGALRM, raise_soft_limit)
    # A handler that runs inside a garbage collector callback (hypothesis installs one) raises
    # into the void: Python ignores exceptions there, and the task would never see its limit.
    collecting = gc.isenabled()
    gc.disable()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if collecting:
            gc.enable()


@pytest.mark.django_db
def test_a_file_over_its_time_budget_fails_alone_with_the_reason(root, folder, settings, slow_chunking):
    settings.INDEX_FILE_TIME_BUDGET_SECONDS = 0.5
    neighbours(root)
    folder_index(folder_id=folder.pk)
    ids = list(File.objects.filter(folder=folder).order_by("path").values_list("pk", flat=True))

    outcomes = files_index(file_ids=ids, task_id="one-group")

    assert statuses(folder) == {
        "a-notes.md": "indexed",
        "b-invoice.txt": "indexed",
        "c-manual.md": "failed",
        "d-textwrap.py": "indexed",
    }
    assert error_of(folder, "c-manual.md").startswith(
        "too large to index in 0.5 seconds: 1.9 MB of text (stopped while"
    )
    assert "INDEX_FILE_TIME_BUDGET_SECONDS" in error_of(folder, "c-manual.md")
    assert len(outcomes) == 4


@pytest.mark.django_db
def test_text_over_the_cap_is_skipped_with_the_reason(root, folder, settings):
    settings.INDEX_MAX_TEXT_CHARS = 10_000
    write(root, "log.txt", "a line of the log\n" * 1000)
    write(root, "page.html", "<p>" + "words " * 3000 + "</p>")  # every kind has the same cap
    write(root, "dump.sql", "select 1 from logs;\n" * 900)  # code (application/sql) is text too
    write(root, "short.html", "<p>" + "words " * 1000 + "</p>")
    folder_index(folder_id=folder.pk, inline=True)
    assert statuses(folder) == {
        "log.txt": "skipped",
        "page.html": "skipped",
        "dump.sql": "skipped",
        "short.html": "indexed",
    }
    assert error_of(folder, "log.txt") == (
        "too much text to index: 18,000 characters, more than the limit of 10,000 (INDEX_MAX_TEXT_CHARS)"
    )
    assert error_of(folder, "dump.sql") == error_of(folder, "log.txt")


@pytest.mark.django_db
def test_a_long_page_is_indexed_whole_and_the_cap_is_what_the_budget_can_embed(root, folder, settings):
    """A one-page edition of a book (1.08 M characters, over the old 1 M html cap) is indexed to its
    last line; a file is skipped only when its budget cannot embed its text (budget x rate)."""
    settings.INDEX_MAX_TEXT_CHARS = 0  # sized to the budget, as by default
    paragraphs = "".join(f"<p>Paragraph {n} of the whole book, on one page of the site.</p>" for n in range(18_000))
    write(root, "print.html", f"<h1>Book</h1>{paragraphs}<p>The last words: END-4410.</p>")
    folder_index(folder_id=folder.pk, inline=True)
    book = File.objects.get(folder=folder, path="print.html")
    assert book.status == "indexed" and book.chunk_count > 500
    assert Chunk.objects.filter(file=book, text__contains="END-4410").exists()

    settings.INDEX_FILE_TIME_BUDGET_SECONDS = 2.0
    settings.INDEX_TEXT_CHARS_PER_SECOND = 10_000
    write(root, "log.txt", "a line of the log\n" * 2000)  # 36,000 characters
    folder_index(folder_id=folder.pk, inline=True)
    assert error_of(folder, "log.txt") == (
        "too much text to index: 36,000 characters, more than the limit of 20,000"
        " (INDEX_FILE_TIME_BUDGET_SECONDS x INDEX_TEXT_CHARS_PER_SECOND)"
    )


@pytest.mark.django_db
def test_a_600_page_pdf_is_indexed_to_its_last_page(root, folder):
    """Over the old 500-page limit: written by PDFium, read by the real pipeline, and its last
    page's words found by search at their page."""
    write(root, "harbour-log.pdf", pdfium_pdf_bytes(long_log_pages()))
    folder_index(folder_id=folder.pk, inline=True)
    log = File.objects.get(folder=folder, path="harbour-log.pdf")
    assert (log.status, log.error) == ("indexed", "")
    hit = chunk_search(folder_id=folder.pk, query="WINTER-6600", k=1, mode=SearchMode.KEYWORD)[0]
    assert (hit.path, hit.location["page"]) == ("harbour-log.pdf", 600)


# As in a worker: autocommit, no test transaction around the task for the signal to break.
@pytest.mark.django_db(transaction=True)
def test_a_group_out_of_time_requeues_its_unfinished_files_one_per_task(
    root, folder, settings, monkeypatch, django_capture_on_commit_callbacks, slow_chunking
):
    write(root, "a-manual.md", big_prose())  # first in the group, and slow
    write(root, "b-invoice.txt", "Invoice INV-4411 is due in thirty days.")
    write(root, "c-notes.md", "# Lease\n\nThe lease renews on the first of March.")
    # Nothing reaches the broker, where a worker could index the files before the test's own task.
    sent = []
    monkeypatch.setattr(
        "apps.library.enqueue.index_files", lambda file_ids, task_id, **options: sent.append((task_id, file_ids))
    )
    folder_index(folder_id=folder.pk)
    sent.clear()
    ids = list(File.objects.filter(folder=folder).order_by("path").values_list("pk", flat=True))

    with django_capture_on_commit_callbacks(execute=True), soft_time_limit_after(0.3):
        files_index(file_ids=ids, task_id="group-token")

    # Nobody failed: every file is pending again, each queued in a task of its own.
    assert set(statuses(folder).values()) == {"pending"}
    assert sorted(group for _, group in sent) == [[file_id] for file_id in ids]
    assert len({token for token, _ in sent}) == 3
    assert not File.objects.filter(folder=folder).exclude(index_claim="").exists()
    notes = IndexingJob.objects.filter(celery_task_id="group-token", file__isnull=False)
    assert set(notes.values_list("error", flat=True)) <= {"re-queued on its own: its group ran out of time", ""}

    # Alone, the slow file meets its own budget; its neighbours are indexed.
    settings.INDEX_FILE_TIME_BUDGET_SECONDS = 0.5
    for token, group in sent:
        files_index(file_ids=group, task_id=token)
    assert statuses(folder) == {"a-manual.md": "failed", "b-invoice.txt": "indexed", "c-notes.md": "indexed"}
    assert error_of(folder, "a-manual.md").startswith("too large to index in 0.5 seconds: 1.9 MB of text")


# As in a worker: autocommit, no test transaction around the task for the signal to break.
@pytest.mark.django_db(transaction=True)
def test_a_task_of_one_file_out_of_time_fails_that_file(root, folder, monkeypatch, slow_chunking):
    write(root, "manual.md", big_prose())
    sent = []
    monkeypatch.setattr("apps.library.enqueue.index_files", lambda file_ids, task_id, **options: sent.append(file_ids))
    folder_index(folder_id=folder.pk)  # queued to the list above, not to a worker
    sent.clear()
    file = File.objects.get(folder=folder)
    with soft_time_limit_after(0.3):
        files_index(file_ids=[file.pk], task_id="alone")
    file.refresh_from_db()
    assert file.status == "failed" and file.error.startswith("too large to index in 14 minutes: ")
    assert sent == []
    assert IndexingJob.objects.get(celery_task_id="alone", file=file).status == "failed"


@pytest.mark.django_db
def test_status_shows_the_file_being_worked_on(root, folder, auth_client, capsys):
    write(root, "a.md", "alpha")
    write(root, "b.md", "beta")
    folder_index(folder_id=folder.pk)
    File.objects.filter(folder=folder, path="b.md").update(status="indexing", index_started_at=folder.created_at)

    body = auth_client.get(f"/api/folders/{folder.pk}").json()
    assert [item["path"] for item in body["working_on"]] == ["b.md"]
    assert body["working_on"][0]["started_at"] is not None
    files = auth_client.get(f"/api/folders/{folder.pk}/files", {"status": "indexing"}).json()["results"]
    assert [(item["path"], item["index_started_at"] is not None) for item in files] == [("b.md", True)]
    call_command("folder_status", folder.pk)
    out = capsys.readouterr().out
    assert "working on:\n  b.md (for " in out


@pytest.fixture
def budget_worker(transactional_db, settings):
    """A real worker whose files get half a second each (the setting, read from its environment)."""
    env = test_database_env(
        EMBEDDING_PROVIDER=settings.EMBEDDING_PROVIDER,
        LLM_PROVIDER=settings.LLM_PROVIDER,
        INDEX_FILE_TIME_BUDGET_SECONDS="0.5",
        INDEX_MAX_TEXT_CHARS="5000000",
    )
    log_path = BASE_DIR / "var" / f"test-budget-worker-{time.monotonic_ns()}.log"
    with start_celery_worker(env=env, queues=ALL_QUEUES, log_path=log_path, name="budget") as process:
        yield process


def test_through_real_workers_only_the_slow_file_of_a_group_fails(root, folder, budget_worker):
    neighbours(root)
    folder_index(folder_id=folder.pk)  # queued: a, b and the big c share one index_files task
    tokens = dict(
        IndexingJob.objects.filter(folder=folder, file__isnull=False).values_list("file__path", "celery_task_id")
    )
    assert tokens["a-notes.md"] == tokens["b-invoice.txt"] == tokens["c-manual.md"]

    wait_for(
        lambda: not File.objects.filter(folder=folder, status__in=["pending", "indexing"]).exists(),
        what="every file of the group settled",
        timeout=90,
        interval=0.2,
    )

    assert statuses(folder) == {
        "a-notes.md": "indexed",
        "b-invoice.txt": "indexed",
        "c-manual.md": "failed",
        "d-textwrap.py": "indexed",
    }
    assert error_of(folder, "c-manual.md").startswith("too large to index in 0.5 seconds: 1.9 MB of text")


@pytest.mark.django_db
def test_the_last_unfinished_file_of_a_group_is_requeued_not_failed(
    root, folder, monkeypatch, django_capture_on_commit_callbacks, slow_chunking
):
    write(root, "a-font.woff", samples.font())  # skipped at once: done before the time runs out
    write(root, "b-manual.md", big_prose())
    folder_index(folder_id=folder.pk)
    ids = list(File.objects.filter(folder=folder).order_by("path").values_list("pk", flat=True))
    sent = []
    monkeypatch.setattr("apps.library.enqueue.index_files", lambda file_ids, task_id, **options: sent.append(file_ids))

    with django_capture_on_commit_callbacks(execute=True), soft_time_limit_after(0.3):
        files_index(file_ids=ids, task_id="two-files")

    assert statuses(folder) == {"a-font.woff": "skipped", "b-manual.md": "pending"}
    assert sent == [[ids[1]]]

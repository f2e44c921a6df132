"""A Celery worker killed with SIGKILL mid-task: indexing a file, syncing a folder, running an agent.

Each task is held at a known point (a Drive call the emulator does not answer yet, a model answer
the wire stub holds back), so the kill lands mid-task every time. With kombu's Redis transport a
killed worker's unacked message stays in the ``unacked`` hash; a worker puts it back on its queue
once nobody has renewed its lease for that worker's visibility timeout (workers/leases.py). The
first test proves both halves; the others restart with a short timeout. A whole host killed while
another keeps working: tests/deploy/test_host_crash.py.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from apps.chat.models import AgentRun, RunStatus
from apps.core.events import events_after, run_channel
from apps.library.chunking import chunk_document
from apps.library.indexing import folder_index
from apps.library.models import Chunk, File, Folder, IndexingJob, SyncLog
from apps.library.parsing import parse_document
from emulators.drive.server import DriveEmulator
from emulators.drive.state import DriveState
from tests.support.faults import HeldDriveCall, SseListener, kill_hard, unacked_messages
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall
from tests.support.servers import start_celery_worker, start_uvicorn, test_database_env
from tests.support.tokens import api_token
from tests.support.waiting import wait_for
from workers.indexing import index_files
from workers.maintenance import ping
from workers.sync import sync_folder

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Short enough to wait out in a test; production's default is 60 s (leases are renewed every sixth).
VISIBILITY_TIMEOUT = 2
# A model answer held back this long is never given: the worker waiting for it is killed first.
HOLD_SECONDS = 90
CLAUSES = " ".join(f"Clause {n} of the lease says the rent is due on day {n % 28 + 1}." for n in range(60))


def text_of(tag: str) -> bytes:
    return f"{tag}. {CLAUSES}".encode()


@pytest.fixture
def drive(settings, emulator: DriveEmulator) -> DriveEmulator:
    """The emulator, for this process (listing) and for workers (through their environment)."""
    settings.DRIVE_API_ENDPOINT = emulator.url
    settings.GOOGLE_SERVICE_ACCOUNT_FILE = ""
    return emulator


def worker(
    tmp_path: Path, name: str, *, queues: list[str], visibility: int, **env: str
) -> AbstractContextManager[subprocess.Popen[bytes]]:
    return start_celery_worker(
        env=test_database_env(EMBEDDING_PROVIDER="hash", CELERY_VISIBILITY_TIMEOUT=str(visibility), **env),
        queues=queues,
        log_path=tmp_path / f"worker-{name}.log",
        name=name,
    )


def drive_worker(
    tmp_path: Path, name: str, drive: DriveEmulator, *, queues: list[str], visibility: int = VISIBILITY_TIMEOUT
) -> AbstractContextManager[subprocess.Popen[bytes]]:
    return worker(tmp_path, name, queues=queues, visibility=visibility, DRIVE_API_ENDPOINT=drive.url)


@contextmanager
def doomed_drive_worker(
    tmp_path: Path, drive: DriveEmulator, *, queues: list[str], held: str
) -> Iterator[tuple[HeldDriveCall, subprocess.Popen[bytes]]]:
    """A worker whose first `held` call to the emulator waits until the test has killed it."""
    with (
        HeldDriveCall(drive.state, held) as call,
        drive_worker(tmp_path, "doomed", drive, queues=queues) as doomed,
    ):
        yield call, doomed


def lease_folder(user, state: DriveState, contents: dict[str, bytes]) -> Folder:
    """Lease/ in the emulator with `contents` (by path, one level of subfolders), connected for `user`."""
    root = state.add_folder("Lease")
    subfolders: dict[str, str] = {}
    for path, content in contents.items():
        parent, _, name = path.rpartition("/")
        if parent and parent not in subfolders:
            subfolders[parent] = state.add_folder(parent, parent_id=root)
        state.add_file(name, content, parent_id=subfolders[parent] if parent else root)
    return Folder.objects.create(owner=user, source="drive", external_id=root, name="Lease")


def unacked_ids() -> set[str]:
    return {message.task_id for message in unacked_messages(settings.CELERY_BROKER_URL)}


def wait_until_visible_again(task_id: str) -> None:
    """Until the message is older than VISIBILITY_TIMEOUT, so a worker starting now restores it."""
    (delivered_at,) = [m.delivered_at for m in unacked_messages(settings.CELERY_BROKER_URL) if m.task_id == task_id]
    wait_for(lambda: time.time() > delivered_at + VISIBILITY_TIMEOUT + 0.2, what="the message to age", timeout=30)


def assert_indexed_once(file: File, content: bytes) -> None:
    """Exactly the chunks a clean index of `content` has: same count, same texts, in order, once."""
    file.refresh_from_db()
    clean = chunk_document(document=parse_document(data=content, mime_type="text/plain", name=file.name))
    stored = list(Chunk.objects.filter(file=file).order_by("chunk_index", "pk").values_list("chunk_index", "text"))
    assert file.status == "indexed" and file.index_claim == "" and file.chunk_count == len(clean) > 1
    assert stored == [(piece.index, piece.text) for piece in clean]


def test_index_files_killed_mid_file_comes_back_only_past_the_visibility_timeout_and_indexes_once(
    user, drive: DriveEmulator, tmp_path
):
    folder = lease_folder(user, drive.state, {"lease.txt": text_of("Lease")})
    queues = ["indexing", "indexing_small", "default"]

    with doomed_drive_worker(tmp_path, drive, queues=queues, held="files.download") as (download, doomed):
        folder_index(folder_id=folder.pk)  # lists here, queues one index_files
        download.wait_arrived()
        file = File.objects.get(folder=folder)
        job = IndexingJob.objects.get(file=file)
        assert (file.status, file.index_claim, job.status) == ("indexing", job.celery_task_id, "running")
        kill_hard(doomed)
    task_id = job.celery_task_id
    assert task_id in unacked_ids()  # not lost: the broker still holds it as delivered-but-unacked

    # A restarted worker on the default timeout (3600 s) leaves the message where it is.
    with drive_worker(tmp_path, "default-timeout", drive, queues=queues, visibility=3600):
        assert ping.delay("alive").get(timeout=30) == "pong:alive"  # its consumer loop has polled
        assert task_id in unacked_ids()
        assert File.objects.get(pk=file.pk).status == "indexing" and not Chunk.objects.filter(file=file).exists()

    # Past the timeout, a worker starting up puts it back on its queue: the same message, once more.
    wait_until_visible_again(task_id)
    with drive_worker(tmp_path, "survivor", drive, queues=queues):
        wait_for(lambda: File.objects.get(pk=file.pk).status == "indexed", what="the redelivered index_files")
        wait_for(lambda: task_id not in unacked_ids(), what="the redelivered message to be acked")

    assert_indexed_once(file, text_of("Lease"))
    job = IndexingJob.objects.get(file=file)
    assert (job.celery_task_id, job.status, job.attempts) == (task_id, "succeeded", 2)
    assert index_files.AsyncResult(task_id).state == "SUCCESS"
    folder.refresh_from_db()
    assert (folder.status, folder.files_total, folder.files_indexed) == ("ready", 1, 1)


def test_sync_killed_mid_listing_is_redelivered_takes_its_claim_back_and_completes(user, drive, tmp_path):
    contents = {"lease.txt": text_of("Lease"), "notes.txt": text_of("Notes"), "old/2019.txt": text_of("Old")}
    folder = lease_folder(user, drive.state, contents)
    queues = ["sync", "indexing", "indexing_small"]

    with doomed_drive_worker(tmp_path, drive, queues=queues, held="files.list") as (listing, doomed):
        task_id = sync_folder.delay(folder.pk).id
        listing.wait_arrived()
        assert Folder.objects.get(pk=folder.pk).sync_started_at is not None  # claimed, mid-sync
        kill_hard(doomed)
    assert task_id in unacked_ids()
    assert not File.objects.filter(folder=folder).exists()

    wait_until_visible_again(task_id)
    with drive_worker(tmp_path, "survivor", drive, queues=queues):
        # Before the fix the redelivery found the folder claimed (by its own dead first delivery),
        # did nothing, and the claim blocked every sync for the task's 30 min time limit.
        wait_for(
            lambda: Folder.objects.filter(pk=folder.pk, status="ready", files_indexed=3).exists(),
            what="the redelivered sync and the indexing it queued",
        )

    folder.refresh_from_db()
    assert folder.sync_started_at is None and folder.last_synced_at is not None and folder.last_error == ""
    assert [(log.mode, log.added, log.error) for log in SyncLog.objects.filter(folder=folder)] == [("full", 3, "")]
    sync_job = IndexingJob.objects.get(folder=folder, kind="sync")
    assert (sync_job.celery_task_id, sync_job.status, sync_job.attempts) == (task_id, "succeeded", 2)
    files = {file.path: file for file in File.objects.filter(folder=folder)}
    assert set(files) == set(contents)
    for path, content in contents.items():
        assert_indexed_once(files[path], content)
        (job,) = IndexingJob.objects.filter(file=files[path])
        assert (job.status, job.attempts) == ("succeeded", 1)
    assert Chunk.objects.filter(folder=folder).count() == sum(file.chunk_count for file in files.values())
    assert task_id not in unacked_ids()


def test_agent_run_killed_mid_step_ends_in_error_and_its_stream_is_told(user, tmp_path):
    folder = Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="empty")
    token = api_token(user)
    headers = {"Authorization": f"Token {token}"}
    with LLMWireStub() as model:
        model.reply_tool_calls(StubToolCall(id="call_1", name="search_folder", arguments={"query": "rent"}))
        model.reply_text("Rent is due on day 1.", delay=HOLD_SECONDS)
        env = {name: str(value) for name, value in model.settings_for("openai").items()}
        with start_uvicorn(env=test_database_env(EMBEDDING_PROVIDER="hash"), log_path=tmp_path / "web.log") as web:
            with worker(tmp_path, "doomed", queues=["agent"], visibility=VISIBILITY_TIMEOUT, **env) as doomed:
                response = httpx.post(
                    f"{web.url}/api/folders/{folder.pk}/chat",
                    json={"message": "When is rent due?", "agent_mode": True},
                    headers=headers,
                    timeout=30,
                )
                assert response.status_code == 202, response.text
                run_id = response.json()["run_id"]
                stream = SseListener(f"{web.url}{response.json()['events_url']}", headers=headers)
                wait_for(lambda: len(model.requests) == 2, what="the agent's second model call")
                wait_for(lambda: stream.saw("tool_result"), what="the tool step on the stream")
                assert AgentRun.objects.get(pk=run_id).status == RunStatus.RUNNING
                kill_hard(doomed)
            (task_id,) = [m.task_id for m in unacked_messages(settings.CELERY_BROKER_URL) if m.args == [run_id]]

            wait_until_visible_again(task_id)
            with worker(tmp_path, "survivor", queues=["agent"], visibility=VISIBILITY_TIMEOUT, **env):
                stream.wait_ended()
                wait_for(lambda: task_id not in unacked_ids(), what="the redelivered message to be acked")

    assert stream.status_code == 200 and stream.types()[-1] == "error"
    assert "interrupted" in stream.received[-1].data["message"]
    run = AgentRun.objects.get(pk=run_id)
    assert (run.status, run.error) == (RunStatus.ERROR, "redelivered") and run.finished_at is not None
    assert not AgentRun.objects.filter(status=RunStatus.RUNNING).exists()
    logged = [event.type for event in events_after(channel=run_channel(run_id))]
    assert logged[-1] == "error" and logged.count("error") == 1 and "done" not in logged
    assert len(model.requests) == 2  # the redelivery did not call the model again

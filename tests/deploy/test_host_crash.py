"""A whole worker host killed (SIGKILL to every process of it) mid-indexing, mid-sync and mid-agent-run.

Two hosts, each a prefork `celery worker` in a process group of its own with its own node name, on
the same queues. The doomed host holds a Drive sync (its listing call held by the emulator), an
agent run (its model answer held by the wire stub) and a group of a 320-file folder's indexing
when its whole group is killed. The survivor renews its own message leases and restores the dead
host's (workers/leases.py): it must finish everything well within 3 minutes of the crash, every
file indexed exactly once, the sync completed, the run ended with a reason its asker can read.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis
from django.conf import settings

from apps.chat.models import AgentRun, RunStatus
from apps.chat.services import chat_start
from apps.core.events import events_after, run_channel
from apps.core.queues import ALL_QUEUES
from apps.library.chunking import chunk_document
from apps.library.indexing import folder_index
from apps.library.models import Chunk, File, Folder, IndexingJob, SyncLog
from apps.library.parsing import parse_document
from config.celery import app
from emulators.drive.server import DriveEmulator
from tests.support.faults import HeldDriveCall, kill_process_group, unacked_messages
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall
from tests.support.servers import start_celery_worker, test_database_env, unique_node_name
from tests.support.waiting import wait_for
from workers.agent import execute_run
from workers.sync import sync_folder

logger = logging.getLogger(__name__)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Seconds: leases are renewed every sixth of it. Short, so the test waits seconds, not a minute.
VISIBILITY_TIMEOUT = 4
RECOVERY_LIMIT = 180
# kombu alone restores expired messages about every 100 s; with leases the dead host's work is
# back on a queue within the timeout plus a renewal, so it is taken up well within this.
REDELIVERY_LIMIT = 30
FILES = 320
HOLD_SECONDS = 200
SENTENCE = "Invoice {n} lists {k} boxes of paper shipped to the Lyon office on day {d}."


def text_of(n: int) -> bytes:
    # One to three chunks per file (256 tokens each), so chunk counts tell a doubled file apart.
    sentences = [SENTENCE.format(n=n, k=k, d=k % 28 + 1) for k in range(12 + 25 * (n % 3))]
    return " ".join(sentences).encode()


def expected_chunks(content: bytes, name: str) -> list[str]:
    document = parse_document(data=content, mime_type="text/plain", name=name)
    return [piece.text for piece in chunk_document(document=document)]


@pytest.fixture
def drive(settings, emulator: DriveEmulator) -> DriveEmulator:
    settings.DRIVE_API_ENDPOINT = emulator.url
    settings.GOOGLE_SERVICE_ACCOUNT_FILE = ""
    return emulator


@contextmanager
def host(tmp_path: Path, name: str, *, node: str, concurrency: int, env: dict[str, str]) -> Iterator[None]:
    """One worker host: a prefork worker and its pool children, in a process group of their own."""
    with start_celery_worker(
        env=test_database_env(EMBEDDING_PROVIDER="hash", CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY_TIMEOUT), **env),
        queues=ALL_QUEUES,
        log_path=tmp_path / f"host-{name}.log",
        hostname=node,
        own_group=True,
        extra_args=["--pool=prefork", f"--concurrency={concurrency}"],
    ) as process:
        yield process  # type: ignore[misc]


def held_task_ids(node: str) -> set[str]:
    """Task ids the node's worker is running or holds prefetched, as it reports them itself."""
    inspect = app.control.inspect(destination=[node], timeout=5)
    held: set[str] = set()
    for replies in (inspect.active(), inspect.reserved()):
        held |= {task["id"] for task in (replies or {}).get(node, [])}
    return held


def unacked_ids() -> set[str]:
    return {message.task_id for message in unacked_messages(settings.CELERY_BROKER_URL)}


@pytest.fixture
def empty_broker() -> None:
    """No message left by an earlier test (queued, or held by a worker it killed) runs here."""
    app.control.purge()
    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete("unacked", "unacked_index")


def test_a_killed_host_s_indexing_sync_and_run_are_finished_by_the_survivor(user, drive, empty_broker, tmp_path):
    big_root = tmp_path / "invoices"
    big_root.mkdir()
    contents = {f"batch-{n // 40}/invoice-{n:03}.txt": text_of(n) for n in range(FILES)}
    for path, content in contents.items():
        (big_root / path).parent.mkdir(exist_ok=True)
        (big_root / path).write_bytes(content)
    big = Folder.objects.create(owner=user, source="local", external_id=str(big_root), name="invoices")

    drive_root = drive.state.add_folder("Lease")
    drive_contents = {f"lease-{n}.txt": text_of(1000 + n) for n in range(3)}
    for name, content in drive_contents.items():
        drive.state.add_file(name, content, parent_id=drive_root)
    leases = Folder.objects.create(owner=user, source="drive", external_id=drive_root, name="Lease")
    chat_root = tmp_path / "chat"
    chat_root.mkdir()
    chat_folder = Folder.objects.create(owner=user, source="local", external_id=str(chat_root), name="chat")

    doomed_node, survivor_node = unique_node_name("doomed"), unique_node_name("survivor")
    with LLMWireStub() as model, HeldDriveCall(drive.state, "files.list") as listing:
        model.reply_tool_calls(StubToolCall(id="call_1", name="search_folder", arguments={"query": "paper"}))
        model.reply_text("Paper went to Lyon.", delay=HOLD_SECONDS)
        env = {name: str(value) for name, value in model.settings_for("openai").items()}
        env["DRIVE_API_ENDPOINT"] = drive.url
        # The held model answer must outlast both hosts' start, not end the run on the agent's clock.
        env |= {"AGENT_TOTAL_TIMEOUT_SECONDS": "240", "LLM_TIMEOUT_SECONDS": "240"}
        with host(tmp_path, "doomed", node=doomed_node, concurrency=3, env=env) as doomed:
            # The doomed host alone takes the sync and the run, each held mid-task.
            sync_id = sync_folder.delay(leases.pk).id
            run = chat_start(user=user, folder=chat_folder, text="Where did the paper go?", agent_mode=True)
            run_task_id = execute_run.delay(str(run.pk)).id
            listing.wait_arrived()
            wait_for(lambda: len(model.requests) == 2, what="the agent's second model call", timeout=60)

            with host(tmp_path, "survivor", node=survivor_node, concurrency=2, env=env):
                # Both hosts live past several timeouts: the doomed host renews its leases, so the
                # survivor (which restores expired ones from its start) takes none of its work.
                time.sleep(2 * VISIBILITY_TIMEOUT)
                held_before = held_task_ids(doomed_node)
                assert {sync_id, run_task_id} <= held_before, (sync_id, run_task_id, held_before)
                assert AgentRun.objects.get(pk=run.pk).status == RunStatus.RUNNING
                assert IndexingJob.objects.get(folder=leases, kind="sync").attempts == 1

                folder_index(folder_id=big.pk)  # lists here, queues the groups on both hosts
                doomed_group, held = _indexing_started_on(doomed_node)
                kill_process_group(doomed)
                crashed_at = time.monotonic()
                listing.release()

                wait_for(
                    lambda: (
                        AgentRun.objects.filter(pk=run.pk, status=RunStatus.ERROR).exists()
                        and IndexingJob.objects.filter(celery_task_id=doomed_group, attempts__gte=2).exists()
                        and IndexingJob.objects.filter(folder=leases, kind="sync", attempts=2).exists()
                    ),
                    what="the dead host's run, sync and indexing taken up again",
                    timeout=REDELIVERY_LIMIT,
                )
                wait_for(
                    lambda: _all_done(big=big, leases=leases),
                    what="every file indexed and the sync complete",
                    timeout=RECOVERY_LIMIT - (time.monotonic() - crashed_at),
                    interval=0.5,
                )
                recovered_in = time.monotonic() - crashed_at
                wait_for(lambda: not unacked_ids() & held, what="the redelivered messages acked", timeout=30)
    logger.warning("host crash: everything finished %.1fs after the kill", recovered_in)
    assert recovered_in < RECOVERY_LIMIT

    # Indexing: every file exactly once, its chunks those of a clean run, nothing left claimed.
    files = {file.path: file for file in File.objects.filter(folder=big)}
    assert set(files) == set(contents)
    for path, content in contents.items():
        file = files[path]
        assert (file.status, file.index_claim) == ("indexed", ""), path
        stored = list(Chunk.objects.filter(file=file).order_by("chunk_index").values_list("text", flat=True))
        assert stored == expected_chunks(content, file.name), path
        assert file.chunk_count == len(stored)
    big.refresh_from_db()
    assert (big.status, big.files_total, big.files_indexed) == ("ready", FILES, FILES)
    # Only what the dead host held ran twice: no live host's message was ever redelivered.
    doubled = set(IndexingJob.objects.filter(folder=big, attempts__gt=1).values_list("celery_task_id", flat=True))
    assert doubled == {doomed_group} and doomed_group in held

    # The sync: redelivered, took its own claim back and completed once.
    leases.refresh_from_db()
    assert leases.sync_started_at is None and leases.last_error == ""
    assert [(log.mode, log.added, log.error) for log in SyncLog.objects.filter(folder=leases)] == [("full", 3, "")]
    for file in File.objects.filter(folder=leases):
        assert file.status == "indexed"
        assert Chunk.objects.filter(file=file).count() == len(expected_chunks(drive_contents[file.path], file.name))

    # The run: failed with a reason its asker can read, told on its stream once; no second model call.
    run.refresh_from_db()
    assert (run.status, run.error) == (RunStatus.ERROR, "redelivered")
    logged = events_after(channel=run_channel(run.pk))
    assert [event.type for event in logged].count("error") == 1 and logged[-1].type == "error"
    assert "interrupted" in logged[-1].data["message"]
    assert len(model.requests) == 2


def _indexing_started_on(node: str) -> tuple[str, set[str]]:
    """The token of an index_files group the node is running, once some of its files are indexed
    and at least half are not (the kill lands mid-group, with time to spare), and all it holds."""
    found: list[tuple[str, set[str]]] = []

    def mid_group() -> bool:
        held = held_task_ids(node)
        for token in held:
            files = File.objects.filter(pk__in=IndexingJob.objects.filter(celery_task_id=token).values("file_id"))
            indexed, total = files.filter(status="indexed").count(), files.count()
            if 0 < indexed <= total // 2:
                found.append((token, held))
                return True
        return False

    wait_for(mid_group, what=f"{node} to be mid-way through an indexing group", timeout=60, interval=0.05)
    return found[0]


def _all_done(*, big: Folder, leases: Folder) -> bool:
    return (
        File.objects.filter(folder=big, status="indexed").count() == FILES
        and Folder.objects.filter(pk=leases.pk, sync_started_at__isnull=True, files_indexed=3).exists()
    )
